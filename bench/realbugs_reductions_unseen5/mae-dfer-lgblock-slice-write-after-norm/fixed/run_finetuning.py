"""Fixed twin of ../buggy/run_finetuning.py: the same program, except that modeling.LGBlock.forward
reads the messenger tokens from x[:, 0].clone(), as commit 5e84a29 does.
torch 2.13: runs and prints "ok". gradguard at 1eed1da: nothing reported.
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
