import torch
import torch.nn as nn

from .neurons import Leaky


class SpikingMLP(nn.Module):
    def __init__(self, n_in, n_hidden, n_out, num_steps=8, beta=0.9):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.lif1 = Leaky(beta=beta)
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.lif2 = Leaky(beta=beta)
        self.num_steps = num_steps

    def forward(self, x):
        spk_rec = []
        for _ in range(self.num_steps):
            spk1 = self.lif1(self.fc1(x))
            spk2 = self.lif2(self.fc2(spk1))
            spk_rec.append(spk2)
        return torch.stack(spk_rec)
