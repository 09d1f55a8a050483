"""An imported loss object (not a tensor) with its own `backward()`, called once per step.

Model believed: `meter.backward()` is `Tensor.backward` on a tensor whose graph the previous
step freed (GG001). Found while reducing IBM/pytorch-seq2seq's `Loss` class (loss/loss.py;
its `loss.backward()` at supervised_trainer.py:63 is not reported there).
"""
import torch
from torch import nn
from realcode_helpers_loss import Meter

model = nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
meter = Meter()
def train_batch(x):
    meter.reset()
    meter.eval_batch(model(x))
    opt.zero_grad()
    meter.backward()
    opt.step()
    return meter.get_loss()
total = 0
for step in range(3):
    loss = train_batch(torch.randn(8, 4))
    total += loss
print("ok", total)
