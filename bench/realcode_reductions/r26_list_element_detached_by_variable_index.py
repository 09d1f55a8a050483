"""Each list element is detached, by a variable index, just before it is used.

Model believed: `hidden[s_id] = hidden[s_id].detach()` does not replace what `hidden[s_id]`
reads next (an element store with an unknown index is a weak update of the whole list), so the
list still holds the graph of the previous sub-batch, or of `model.init_hidden()` when the model
may come from `torch.load` (its method is then unknown): GG002 "share through `hidden`" here,
GG003 on `loss` when `model = LM(3, 4)` only. Runs fine: every element is detached before use.
Reduces zihangdai/mos main.py:215 and finetune.py:207 (GG002), where `hidden[s_id] =
repackage_hidden(hidden[s_id])` detaches one sub-batch's LSTM state per inner step.
"""
import os

import torch
import torch.nn as nn


class LM(nn.RNN):
    def init_hidden(self, bsz):
        return torch.zeros(1, bsz, 4)


model = torch.load("lm.pt", weights_only=False) if os.path.exists("lm.pt") else LM(3, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = [model.init_hidden(2) for _ in range(2)]
for step in range(3):
    opt.zero_grad()
    for s_id in range(2):
        hidden[s_id] = hidden[s_id].detach()
        out, hidden[s_id] = model(torch.randn(5, 2, 3), hidden[s_id])
        loss = out.pow(2).mean()
        loss.backward()
    opt.step()
print("ok")
