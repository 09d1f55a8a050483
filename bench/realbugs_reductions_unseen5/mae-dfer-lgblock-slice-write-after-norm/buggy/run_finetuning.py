"""Reduction of sunlicai/MAE-DFER at 8cd44d5 (fix 5e84a29): run_class_finetuning.py creates the model
by name through a registry (registration happens by importing the model module), then
engine.train_one_epoch -> utils.LossScaler.__call__ -> loss.backward(). torch 2.13: "one of the
variables needed for gradient computation has been modified by an inplace operation" in
utils.LossScaler.__call__, first step. The fix (../fixed) clones x[:, 0] before reshaping it.
gradguard at 1eed1da reports nothing for this program (missed, as on the repository).
"""

import torch

import modeling  # noqa: F401  (registers the architectures)
from engine import train_one_epoch
from registry import create_model
from utils import LossScaler

torch.manual_seed(0)
model = create_model("region_transformer_small", dim=16, depth=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = torch.nn.CrossEntropyLoss()
for epoch in range(2):
    train_one_epoch(model, criterion, optimizer, LossScaler())
print("ok")
