"""Reduction of locuslab/deq DEQ-Sequence/train_transformer.py:469-486 (false): r48's model, in the
training loop's two modes (chunked batches with one memory per chunk; one batch) and the two arms of
`compute_jac_loss`. The memories come back detached (made under no_grad) through a DataParallel
subclass; only the loss has a graph, backward-ed once. At 02d3de9 gradguard reports GG002 at the
chunk loop's `loss.backward()` (deq's line 472 is now GG002) and at the one-batch backwards, and GG006;
at 94425bf the same lines were GG003 ("`kwargs` carries the previous iteration's graph"): the same
belief, another rule. Runs with no option, --batch_chunk 2, --multi_gpu --gpu0_bsz 0.
"""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DataParallel


class BalancedDataParallel(DataParallel):
    """A DataParallel whose first GPU takes a smaller share of the batch (on CPU: the module itself)."""

    def __init__(self, gpu0_bsz, *args, **kwargs):
        self.gpu0_bsz = gpu0_bsz
        super().__init__(*args, **kwargs)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        if self.gpu0_bsz == 0:
            device_ids = self.device_ids[1:]
        else:
            device_ids = self.device_ids
        inputs, kwargs = self.scatter(inputs, kwargs, device_ids)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **kwargs[0])
        replicas = self.replicate(self.module, self.device_ids)
        if self.gpu0_bsz == 0:
            replicas = replicas[1:]
        outputs = self.parallel_apply(replicas, device_ids, inputs, kwargs)
        return self.gather(outputs, self.output_device)


class MemLM(nn.Module):
    """A language model with a memory of the previous segment's states, kept without their graph."""

    def __init__(self, ntokens=20, d_model=8, mem_len=4):
        super().__init__()
        self.emb = nn.Embedding(ntokens, d_model)
        self.cell = nn.Linear(2 * d_model, d_model)
        self.out = nn.Linear(d_model, ntokens)
        self.mem_len = mem_len

    def forward(self, data, target, *mems, compute_jac_loss=False):
        x = self.emb(data)                                    # seq x bsz x d
        z0 = mems[0] if mems else torch.zeros_like(x[:1])
        h = torch.tanh(self.cell(torch.cat([x, z0.mean(0, keepdim=True).expand_as(x)], -1)))
        loss = nn.functional.cross_entropy(self.out(h).view(-1, self.out.out_features), target.view(-1))
        with torch.no_grad():
            new_mem = torch.cat([z0, h], 0)[-self.mem_len:].detach()
        jac_loss = (h ** 2).mean() if compute_jac_loss else torch.tensor(0.0)
        return [loss, jac_loss, None, new_mem]


parser = argparse.ArgumentParser()
parser.add_argument("--multi_gpu", action="store_true")
parser.add_argument("--gpu0_bsz", type=int, default=-1)
parser.add_argument("--batch_chunk", type=int, default=1)
parser.add_argument("--jac_loss_freq", type=float, default=0.5)
args = parser.parse_args()

torch.manual_seed(0)
model = MemLM()
if args.multi_gpu:
    if args.gpu0_bsz >= 0:
        para_model = BalancedDataParallel(args.gpu0_bsz, model, dim=1)
    else:
        para_model = nn.DataParallel(model, dim=1)
else:
    para_model = model
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

if args.batch_chunk > 1:
    mems = [[] for _ in range(args.batch_chunk)]
else:
    mems = []
for step in range(6):
    data, target = torch.randint(0, 20, (6, 4)), torch.randint(0, 20, (6, 4))
    model.zero_grad()
    compute_jac_loss = float(torch.rand(())) < args.jac_loss_freq
    if args.batch_chunk > 1:
        data_chunks = data.chunk(args.batch_chunk, dim=1)
        target_chunks = target.chunk(args.batch_chunk, dim=1)
        for i in range(args.batch_chunk):
            ret = para_model(data_chunks[i].contiguous(), target_chunks[i].contiguous(), *mems[i],
                             compute_jac_loss=compute_jac_loss)
            loss, jac_loss, _, mems[i] = ret[0], ret[1], ret[2], ret[3:]
            loss = loss.float().mean().type_as(loss) / args.batch_chunk
            jac_loss = jac_loss.float().mean().type_as(loss) / args.batch_chunk
            if compute_jac_loss:
                (loss + jac_loss * 0.5).backward()
            else:
                loss.backward()
    else:
        ret = para_model(data, target, *mems, compute_jac_loss=compute_jac_loss)
        loss, jac_loss, _, mems = ret[0], ret[1], ret[2], ret[3:]
        loss = loss.float().mean().type_as(loss)
        jac_loss = jac_loss.float().mean().type_as(loss)
        if compute_jac_loss:
            (loss + jac_loss * 0.5).backward()
        else:
            loss.backward()
    optimizer.step()
print("ok")
