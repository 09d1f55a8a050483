"""Next-step forecasting on a sensor network whose connectivity is unknown and learned."""
import torch
import torch.nn.functional as F

from models import Forecaster

N_NODES = 10
STEPS = 200


def simulate():
    A = torch.rand(N_NODES, N_NODES) * (torch.rand(N_NODES, N_NODES) < 0.3)
    A = A / A.sum(1, keepdim=True).clamp(min=1e-6)
    x = torch.zeros(STEPS, N_NODES)
    x[0] = torch.randn(N_NODES)
    for t in range(1, STEPS):
        x[t] = 0.6 * x[t - 1] + 0.35 * A @ x[t - 1] + 0.2 * torch.randn(N_NODES)
    return x


def batches(series, batch_size=16):
    # inputs: the current value and the previous one at each node; target: the next value
    inp = torch.stack([series[1:-1], series[:-2]], dim=-1)
    tgt = series[2:]
    perm = torch.randperm(inp.size(0))
    for i in range(0, inp.size(0), batch_size):
        idx = perm[i:i + batch_size]
        yield inp[idx], tgt[idx]


def train(model, series, optimizer, epochs):
    history = []
    for epoch in range(epochs):
        model.train()
        for x, y in batches(series):
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
    return history


def main():
    torch.manual_seed(21)
    series = simulate()
    model = Forecaster(N_NODES)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    history = train(model, series, optimizer, epochs=6)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {sum(history[-5:]) / 5:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
