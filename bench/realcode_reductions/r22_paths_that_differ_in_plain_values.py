# Repository: Smerity/sha-rnn
# Commit:     218d748022dbcf32d50bbbb4d151a9b6de3f8bba
# gradguard:  flagged at 704029a and b31e02f; not from 63e47b5 on ("regroup: paths that
#             differ only in plain values are joined"); kept as a
#             regression test for that change.
# Finding:    splitcross.py:204  GG003 state-not-detached (error)
#             "`c` carries the previous iteration's graph, which the backward at line 204 freed"
# WHY FALSE: `c` is rebuilt from scratch every iteration by crit(...); nothing from an earlier
# iteration is kept (the module stores no tensor; `results` in logprob() is a fresh local list).
# The original __main__ self-test stops earlier, at `print('Crit', c.exp().data[0])` (IndexError on
# a 0-dim tensor in torch >= 0.4, unrelated); with that print fixed (.item()) it runs all 10
# iterations through c.backward() without error.
# What the analysis gets wrong is not one construct: the finding needs ALL THREE of
#   (a) the never-taken `if head_weight.dtype == torch.float16: combo = combo.half()` branch,
#   (b) the `if softmaxed_head_res is None:` default branch in logprob(), and
#   (c) the `if __name__ == '__main__':` guard around the loop;
# dropping any one makes it go away (checked one by one), and a hand-written equivalent with the
# same three features but tidier shapes is NOT flagged. Looks like a precision loss once the number of
# paths/states grows, which then joins the previous
# iteration's graph into `c` (an intermediate reduction even reported the local `results` list of
# logprob() as carrying the previous iteration's graph).
import torch
import torch.nn as nn
class SplitCrossEntropyLoss(nn.Module):
    def __init__(self, hidden_size, splits):
        super().__init__()
        self.hidden_size = hidden_size
        self.splits = [0] + splits + [100 * 1000000]
        self.nsplits = len(self.splits) - 1
        self.tail_vectors = nn.Parameter(torch.zeros(self.nsplits - 1, hidden_size))
        self.tail_bias = nn.Parameter(torch.zeros(self.nsplits - 1))
    def logprob(self, weight, bias, hiddens, splits=None, softmaxed_head_res=None):
        if softmaxed_head_res is None:
            head_weight = weight[0:4]
            head_bias = bias[0:4]
            head_res = torch.nn.functional.linear(hiddens, head_weight, bias=head_bias)
            softmaxed_head_res = torch.nn.functional.log_softmax(head_res, dim=-1)
        results = []
        running_offset = 0
        for idx in splits:
            start, end = self.splits[idx], self.splits[idx + 1]
            tail_weight = weight[start:end]
            tail_bias = bias[start:end]
            tail_res = torch.nn.functional.linear(hiddens, tail_weight, bias=tail_bias)
            head_entropy = (softmaxed_head_res[:, -idx]).contiguous()
            tail_entropy = torch.nn.functional.log_softmax(tail_res, dim=-1)
            results.append(head_entropy.view(-1, 1) + tail_entropy)
        return results[0]
    def forward(self, weight, bias, hiddens, targets):
        total_loss = None
        split_targets, split_hiddens = [targets[:50], targets[50:]], [hiddens[:50], hiddens[50:]]
        start, end = self.splits[0], self.splits[1]
        head_weight = weight[start:end]
        head_bias = bias[start:end]
        head_weight = torch.cat([head_weight, self.tail_vectors])
        head_bias = torch.cat([head_bias, self.tail_bias])
        combo = hiddens
        if head_weight.dtype == torch.float16: combo = combo.half()
        all_head_res = torch.nn.functional.linear(combo, head_weight, bias=head_bias)
        softmaxed_all_head_res = torch.nn.functional.log_softmax(all_head_res, dim=-1)
        running_offset = 0
        for idx in range(2):
            if idx == 0:
                softmaxed_head_res = softmaxed_all_head_res[running_offset:running_offset + len(split_hiddens[idx])]
                entropy = -softmaxed_head_res[:, 0]
            else:
                softmaxed_head_res = softmaxed_all_head_res[running_offset:running_offset + len(split_hiddens[idx])]
                tail_res = self.logprob(weight, bias, split_hiddens[idx], splits=[idx], softmaxed_head_res=softmaxed_head_res)
                head_entropy = softmaxed_head_res[:, -idx]
                indices = (split_targets[idx] - self.splits[idx]).view(-1, 1)
                tail_entropy = torch.gather(torch.nn.functional.log_softmax(tail_res, dim=-1), dim=1, index=indices).squeeze()
                entropy = -(head_entropy + tail_entropy)
            running_offset += len(split_hiddens[idx])
            total_loss = entropy.sum() if total_loss is None else total_loss + entropy.sum()
        return total_loss / len(targets)
if __name__ == '__main__':
    V = 8
    H = 10
    N = 100
    E = 10
    embed = torch.nn.Embedding(V, H)
    crit = SplitCrossEntropyLoss(hidden_size=H, splits=[V // 2])
    bias = torch.nn.Parameter(torch.ones(V))
    optimizer = torch.optim.SGD(list(embed.parameters()) + list(crit.parameters()), lr=1)
    for _ in range(E):
        prev = torch.randint(0, V, (N,))
        x = torch.cat([torch.randint(0, 4, (50,)), torch.randint(4, 8, (50,))])
        y = embed(prev)
        c = crit(embed.weight, bias, y, x)
        optimizer.zero_grad()
        c.backward()
        optimizer.step()
    print("ok")
