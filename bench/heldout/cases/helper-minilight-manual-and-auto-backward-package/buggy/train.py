"""A regression model written against the minilight mini-framework."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from minilight import Fitter, LightModule


class LitRegressor(LightModule):
    def __init__(self, in_dim=8, hidden=32, lr=3e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.lr = lr

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.manual_backward(loss)
        self.log("train_loss", loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def make_batches(n=160, in_dim=8, batch_size=32):
    x = torch.randn(n, in_dim)
    y = torch.sin(x[:, 0]) + 0.5 * x[:, 1]
    return list(zip(x.split(batch_size), y.split(batch_size)))


def main():
    torch.manual_seed(0)
    model = LitRegressor()
    Fitter(max_epochs=2).fit(model, make_batches())
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {model.logged['train_loss']:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
