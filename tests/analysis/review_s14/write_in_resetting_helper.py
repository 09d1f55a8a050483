import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x, hx):
        hx = self.gru(x, hx)
        return self.head(hx), hx


def reset_finished(hx, done):
    hx[done] = 0.0


def train(agent, optimizer, updates):
    hx = torch.zeros(3, 4)
    for update in range(updates):
        values = []
        hx = hx.detach()
        for t in range(4):
            value, hx = agent(torch.randn(3, 4), hx)
            done = torch.rand(3) < 0.3
            reset_finished(hx, done)
            values.append(value)
        loss = torch.stack(values).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
agent = Agent()
train(agent, torch.optim.Adam(agent.parameters()), 5)
