import torch
import torch.nn as nn


class RecurrentActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hid=32):
        super().__init__()
        self.inp = nn.Linear(obs_dim, hid)
        self.gru = nn.GRUCell(hid, hid)
        self.policy = nn.Linear(hid, n_actions)
        self.value = nn.Linear(hid, 1)
        self.hid = hid

    def forward(self, obs, hx):
        hx = self.gru(torch.tanh(self.inp(obs)), hx)
        return self.policy(hx), self.value(hx).squeeze(-1), hx
