"""REINFORCE as minimalRL writes it in full: the policy keeps `(reward, prob)` pairs in `self.data`
through a method, and `train_net` walks them backwards (`self.data[::-1]`), summing the reward-to-go
`R = r + gamma * R` and backward-ing one loss per pair.

Model believed: a slice of a list is not a list, and a list's items are one summary value whose every
part carries the graph: the reward `r`, and with it `R`, seemed to carry the previous pair's graph
(GG003), and each pair's backward to free the next one's (GG002).
Reduces seungeunrho/minimalRL REINFORCE.py:35.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

gamma = 0.98


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=2e-4)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        R = 0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + gamma * R
            loss = -torch.log(prob) * R
            loss.backward()
        self.optimizer.step()
        self.data = []


def main():
    pi = Policy()
    for n_epi in range(3):
        done = False
        t = 0
        while not done:
            prob = pi(torch.randn(4))
            a = torch.multinomial(prob, 1).item()
            pi.put_data((1.0, prob[a]))
            t += 1
            done = t >= 5
        pi.train_net()
    print("ok")


if __name__ == "__main__":
    main()
