"""Fixed twin of ../buggy/train.py: the same program, except that model.FlowStep.forward updates z2 out
of place (z2 = z2 + shift; z2 = z2 * scale), as commit 3aa18c3 does.
torch 2.13: runs and prints "ok". gradguard at 1eed1da: nothing reported.
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
