import torch
import torch.nn.functional as F

from zoo import build_model

CONFIG = {
    "models": {"mlp": {"lr": 1e-2}, "resmlp": {"lr": 5e-3}, "linear": {"lr": 5e-2}},
    "n_in": 6, "n_out": 3, "epochs": 4, "batch": 32, "batches": 5,
}


def batches(w, g):
    for _ in range(CONFIG["batches"]):
        x = torch.randn(CONFIG["batch"], CONFIG["n_in"], generator=g)
        yield x, (x @ w + 0.5 * x.pow(2) @ w).argmax(1)


if __name__ == "__main__":
    torch.manual_seed(20)
    g = torch.Generator().manual_seed(20)
    w = torch.randn(CONFIG["n_in"], CONFIG["n_out"], generator=g)
    models = {name: build_model(name, n_in=CONFIG["n_in"], n_out=CONFIG["n_out"]) for name in CONFIG["models"]}
    optimizers = {name: torch.optim.Adam(m.parameters(), lr=CONFIG["models"][name]["lr"]) for name, m in models.items()}
    for epoch in range(CONFIG["epochs"]):
        totals = {name: 0.0 for name in models}
        for x, y in batches(w, g):
            for name, model in models.items():
                loss = F.cross_entropy(model(x), y)
                optimizers[name].zero_grad()
                loss.backward()
                optimizers[name].step()
                totals[name] += loss.item() / CONFIG["batches"]
        print(f"epoch {epoch} " + " ".join(f"{k} {v:.4f}" for k, v in totals.items()))
    x, y = next(batches(w, g))
    with torch.no_grad():
        ensemble = torch.stack([m(x).softmax(1) for m in models.values()]).mean(0)
    acc = (ensemble.argmax(1) == y).float().mean().item()
    param_sum = sum(p.sum().item() for m in models.values() for p in m.parameters())
    print(f"ensemble acc {acc:.3f} param_sum {param_sum:.4f}")
