"""Online forecasting of several sensor streams; each stream keeps its own GRU state."""
import torch
import torch.nn.functional as F

from models import StreamForecaster

CONFIG = {
    "streams": ["pump_a", "pump_b", "valve"],
    "window": 6,
    "n_windows": 10,
    "epochs": 2,
    "lr": 3e-3,
    "log_every": 5,
}


def make_streams(names, length, n_features=3):
    t = torch.linspace(0, 12, length).unsqueeze(-1)
    data = {}
    for k, name in enumerate(names):
        phase = torch.arange(n_features) * 0.7 + k
        data[name] = torch.sin(t * (1 + 0.3 * k) + phase) + 0.05 * torch.randn(length, n_features)
    return data


def train(model, streams, optimizer, cfg):
    states = {name: None for name in streams}
    step = 0
    for epoch in range(cfg["epochs"]):
        for w in range(cfg["n_windows"]):
            lo = w * cfg["window"]
            optimizer.zero_grad()
            loss = 0.0
            for name, series in streams.items():
                x = series[lo:lo + cfg["window"]].unsqueeze(0)
                y = series[lo + 1:lo + 1 + cfg["window"]].unsqueeze(0)
                pred, h = model(x, states[name])
                states[name] = h
                loss = loss + F.mse_loss(pred, y)
            loss.backward()
            optimizer.step()
            step += 1
            if step % cfg["log_every"] == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    return loss.item()


@torch.no_grad()
def validate(model, streams, cfg):
    err = 0.0
    for series in streams.values():
        pred, _ = model(series[:-1].unsqueeze(0))
        err += F.mse_loss(pred, series[1:].unsqueeze(0)).item()
    return err / len(streams)


if __name__ == "__main__":
    torch.manual_seed(7)
    cfg = CONFIG
    streams = make_streams(cfg["streams"], cfg["window"] * cfg["n_windows"] + 1)
    model = StreamForecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    final = train(model, streams, optimizer, cfg)
    val = validate(model, streams, cfg)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {final:.4f} val_mse {val:.4f} param_sum {param_sum:.4f}")
