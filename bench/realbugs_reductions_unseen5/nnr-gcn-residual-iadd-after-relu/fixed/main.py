"""Fixed twin of ../buggy/main.py: the same program, except that layers.GCNLayer.forward writes the
residual sum out of place (out = out + feature), as commit 5dd9f16 does.
torch 2.13: runs and prints "ok". gradguard at 1eed1da: nothing reported.
"""

import torch

from model import Model
from trainer import Trainer

torch.manual_seed(0)
config = {"num_news": 50, "dim": 16, "gcn_layers": 2, "no_gcn_residual": False}
model = Model(config)
trainer = Trainer(model, config)
trainer.train()
print("ok")
