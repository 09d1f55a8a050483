"""Reduction of Veason-silverbullet/NNR at 03c57b8 (fix 5dd9f16): main.py -> trainer.py -> model.py
-> layers.py. torch 2.13: "one of the variables needed for gradient computation has been modified
by an inplace operation" at trainer.py's loss.backward(), first batch. The cause is the `+=` in
layers.GCNLayer.forward, three calls away from the backward; the fix (../fixed) changes that line only.
gradguard at 1eed1da reports nothing for this program (missed, as on the repository).
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
