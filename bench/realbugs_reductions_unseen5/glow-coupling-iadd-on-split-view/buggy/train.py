"""Reduction of chaiyujin/glow-pytorch at 5aa1211 (fix 3aa18c3): train.py -> build() -> Trainer.train
-> model.FlowStep. torch 2.13: "one of the variables needed for gradient computation has been
modified by an inplace operation" at trainer.py's loss.backward(). The fix rewrites the two in-place
updates of z2 in model.py as out-of-place ones (../fixed).
gradguard at 1eed1da reports nothing for this program (missed, as on the repository).
"""

import torch

from model import Glow
from trainer import Trainer


def build():
    graph = Glow(channels=4, hidden=16, depth=2)
    optim = torch.optim.Adam(graph.parameters(), lr=1e-3)
    return {"graph": graph, "optim": optim}


torch.manual_seed(0)
built = build()
trainer = Trainer(**built)
trainer.train()
print("ok")
