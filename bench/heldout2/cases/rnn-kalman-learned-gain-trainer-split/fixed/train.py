"""Train the learned-gain filter on simulated tracks, one sequence batch at a time."""
import torch
import torch.nn.functional as F

from kalman import LearnedGainFilter, simulate

BATCH = 16
STEPS = 20


class Trainer:
    def __init__(self, model, lr=5e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.losses = []

    def train_sequence(self, meas, truth):
        self.model.train()
        self.model.init_sequence(torch.zeros(meas.size(0), 2))
        estimates = []
        for t in range(meas.size(1)):
            estimates.append(self.model.step(meas[:, t]))
        est = torch.stack(estimates, dim=1)
        loss = F.mse_loss(est, truth)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.losses.append(loss.item())
        return loss.item()

    @torch.no_grad()
    def evaluate(self, data):
        total = 0.0
        for meas, truth in data:
            self.model.init_sequence(torch.zeros(meas.size(0), 2))
            est = torch.stack([self.model.step(meas[:, t]) for t in range(meas.size(1))], dim=1)
            total += F.mse_loss(est, truth).item()
        return total / len(data)


def main():
    torch.manual_seed(7)
    train_data = simulate(12, BATCH, STEPS)
    val_data = simulate(3, BATCH, STEPS)
    trainer = Trainer(LearnedGainFilter())
    for epoch in range(3):
        for meas, truth in train_data:
            trainer.train_sequence(meas, truth)
        print(f"epoch {epoch} train {sum(trainer.losses[-12:]) / 12:.4f}")
    val = trainer.evaluate(val_data)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"final loss {trainer.losses[-1]:.4f} val {val:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
