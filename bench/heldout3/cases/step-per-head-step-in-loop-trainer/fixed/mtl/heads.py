import torch.nn as nn

TASKS = {"age": 1, "gender": 2, "smile": 2}


class Encoder(nn.Module):
    def __init__(self, n_in, width=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())

    def forward(self, x):
        return self.net(x)


def build_heads(width=32):
    return nn.ModuleDict({t: nn.Linear(width, k) for t, k in TASKS.items()})
