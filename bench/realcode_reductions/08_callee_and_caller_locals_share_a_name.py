"""`self.loss` is a loss object given to the trainer; `train_batch` returns its `get_loss()`, a float.
Model believed the float holds a graph (GG010); renaming `loss` in either method removes the finding.
Reduces IBM/pytorch-seq2seq seq2seq/trainer/supervised_trainer.py:106, 107 (`self.loss`: loss/loss.py)."""
import torch
from torch import nn
class Meter:
    def reset(self):
        self.acc = 0
    def eval_batch(self, out):
        self.acc = self.acc + out.pow(2).mean()
    def backward(self):
        self.acc.backward()
    def get_loss(self):
        return self.acc.item()
class Trainer:
    def __init__(self, loss):
        self.loss, self.model = loss, nn.Linear(4, 4)
    def train_batch(self, x):
        loss = self.loss
        loss.reset()
        loss.eval_batch(self.model(x))
        loss.backward()
        return loss.get_loss()
    def train(self):
        total = 0
        for step in range(3):
            loss = self.train_batch(torch.randn(8, 4))
            total += loss
        return total
print("ok", Trainer(Meter()).train())
