"""Spiking-style leaky integrate-and-fire layer trained with a surrogate gradient on a long stream.

The membrane state is carried across chunks of the stream (truncated BPTT)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class SurrogateSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x > 0).float()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + 10 * x.abs()) ** 2


class LIFCell(nn.Module):
    def __init__(self, n_in, n_hidden, tau_mem=0.9, tau_syn=0.8):
        super().__init__()
        self.fc = nn.Linear(n_in, n_hidden)
        self.tau_mem, self.tau_syn = tau_mem, tau_syn

    def forward(self, x, state):
        v, i = state
        i = self.tau_syn * i + self.fc(x)
        v = self.tau_mem * v + (1 - self.tau_mem) * i
        z = SurrogateSpike.apply(v - 0.5)
        v = v * (1 - z)
        return z, (v, i)


class Net(nn.Module):
    def __init__(self, n_in=8, n_hidden=32, n_out=2):
        super().__init__()
        self.cell = LIFCell(n_in, n_hidden)
        self.readout = nn.Linear(n_hidden, n_out)

    def initial_state(self, batch):
        z = torch.zeros(batch, self.cell.fc.out_features)
        return (z, z.clone())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk", type=int, default=5)
    ap.add_argument("--stream-len", type=int, default=60)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=5e-3)
    args = ap.parse_args()
    torch.manual_seed(3)

    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    x = (torch.rand(args.stream_len, args.batch, 8) < 0.3).float()
    labels = (x[:, :, :4].sum(-1) > x[:, :, 4:].sum(-1)).long()

    state = net.initial_state(args.batch)
    t, chunk_id, hist = 0, 0, []
    while t < args.stream_len:
        logits = []
        for k in range(t, min(t + args.chunk, args.stream_len)):
            z, state = net.cell(x[k], state)
            logits.append(net.readout(z))
        logits = torch.stack(logits)
        y = labels[t:t + len(logits)]
        loss = F.cross_entropy(logits.reshape(-1, 2), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        # truncate the history before the next chunk
        v, i = state
        state = (v.detach(), i)
        hist.append(loss.item())
        if chunk_id % 4 == 0:
            print(f"chunk {chunk_id:2d} t={t:3d} loss {loss.item():.4f}")
        t += args.chunk
        chunk_id += 1

    with torch.no_grad():
        s = net.initial_state(args.batch)
        correct = 0
        for k in range(args.stream_len):
            z, s = net.cell(x[k], s)
            correct += (net.readout(z).argmax(-1) == labels[k]).sum().item()
    acc = correct / (args.stream_len * args.batch)
    param_sum = sum(p.sum().item() for p in net.parameters())
    print(f"last loss {hist[-1]:.4f} acc {acc:.3f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
