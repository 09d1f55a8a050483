"""Segment-level recurrence through a DataParallel subclass: the memory comes back detached.

Model believed: what the model returns through the wrapper (`ret`, and so `mems = ret[1:]`, fed
back as the next call's arguments) carries the previous iteration's graph, freed by
`loss.backward()`. It does not: the model makes the new memory under `no_grad` and detaches it; only
`ret[0]`, the loss, has a graph, and it is backward-ed once. On CPU `device_ids` is empty and the
wrapper's forward is `self.module(*inputs, **kwargs)`. Runs fine with no option, `--multi_gpu`
and `--multi_gpu --gpu0_bsz 0`. Reduces locuslab/deq (1fb7059d6d89bb26d16da80ab9489dcc73fc5472)
DEQ-Sequence/train_transformer.py:469-486, where gradguard reports GG003 and GG006 (six findings:
"`inputs`/`kwargs`/`loss` carries the previous iteration's graph", "`ret` was computed once"), the
DEQ-Transformer's memories (`_update_mems`: `torch.no_grad()` and `.detach()`) fed back through
`BalancedDataParallel` (utils/data_parallel.py). With `para_model = model` only, or with
`nn.DataParallel` as the only wrapper, the finding goes away (in the repository too: with
`para_model = model.to(device)` the six are gone, though a step-budget note appears at module
level); it stays when the subclass's forward loses either its scatter part or its
replicate/parallel_apply/gather part (its first branch, `return self.module(*inputs, **kwargs)`
when there are no devices, kept in both).
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

    def forward(self, data, target, *mems):
        x = self.emb(data)                                    # seq x bsz x d
        z0 = mems[0] if mems else torch.zeros_like(x[:1])
        h = torch.tanh(self.cell(torch.cat([x, z0.mean(0, keepdim=True).expand_as(x)], -1)))
        loss = nn.functional.cross_entropy(self.out(h).view(-1, self.out.out_features), target.view(-1))
        with torch.no_grad():
            new_mem = torch.cat([z0, h], 0)[-self.mem_len:].detach()
        return [loss, new_mem]


parser = argparse.ArgumentParser()
parser.add_argument("--multi_gpu", action="store_true")
parser.add_argument("--gpu0_bsz", type=int, default=-1)
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

mems = []
for step in range(5):
    data, target = torch.randint(0, 20, (6, 3)), torch.randint(0, 20, (6, 3))
    model.zero_grad()
    ret = para_model(data, target, *mems)
    loss, mems = ret[0], ret[1:]
    loss.backward()
    optimizer.step()
print("ok")
