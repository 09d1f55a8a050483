"""Train a two-layer spiking network (leaky integrate-and-fire neurons, surrogate gradient) to tell
rate-coded input patterns apart; each layer's membrane potential is reset in place between samples,
as some spiking libraries write their `reset()`."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_INPUTS = 12
N_HIDDEN = 16
N_CLASSES = 3
TIME_STEPS = 8
N_SAMPLES = 24
EPOCHS = 2


def spike(v, slope=5.0):
    hard = (v > 0).float()
    soft = torch.sigmoid(slope * v)
    return soft + (hard - soft).detach()


class LIF(nn.Module):
    def __init__(self, size, beta=0.8, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.mem = torch.zeros(1, size)

    def reset(self):
        self.mem.zero_()

    def forward(self, current):
        self.mem = self.beta * self.mem + current
        out = spike(self.mem - self.threshold)
        self.mem = self.mem - out * self.threshold
        return out


class SpikingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_INPUTS, N_HIDDEN)
        self.lif1 = LIF(N_HIDDEN)
        self.fc2 = nn.Linear(N_HIDDEN, N_CLASSES)
        self.lif2 = LIF(N_CLASSES)

    def reset(self):
        self.lif1.reset()
        self.lif2.reset()

    def forward(self, spikes):
        counts = torch.zeros(1, N_CLASSES)
        for t in range(spikes.shape[0]):
            counts = counts + self.lif2(self.fc2(self.lif1(self.fc1(spikes[t]))))
        return counts


def train(model, opt, rates, labels):
    for epoch in range(EPOCHS):
        total, correct = 0.0, 0
        for i in range(N_SAMPLES):
            label = labels[i]
            spikes = (torch.rand(TIME_STEPS, 1, N_INPUTS) < rates[label]).float()
            model.reset()
            counts = model(spikes)
            loss = F.cross_entropy(counts, label.view(1))
            opt.zero_grad()
            loss.backward()  # expect: GG003
            opt.step()
            total += loss.item()
            correct += int(counts.argmax() == label)
        print(f"epoch {epoch}: loss {total / N_SAMPLES:.4f}, accuracy {correct / N_SAMPLES:.2f}")


if __name__ == "__main__":
    rates = torch.rand(N_CLASSES, N_INPUTS)
    labels = torch.randint(0, N_CLASSES, (N_SAMPLES,))
    model = SpikingNet()
    train(model, torch.optim.Adam(model.parameters(), lr=1e-2), rates, labels)
