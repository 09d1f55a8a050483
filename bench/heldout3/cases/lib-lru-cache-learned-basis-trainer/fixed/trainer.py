import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, lr=1e-2, log_every=10):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.log_every = log_every
        self.global_step = 0

    def fit(self, make_batch, steps, n_points):
        for _ in range(steps):
            x, y = make_batch()
            pred = self.model(x, n_points)
            loss = F.mse_loss(pred, y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if self.global_step % self.log_every == 0:
                print(f"step {self.global_step} loss {loss.item():.4f}")
            self.global_step += 1
        return loss.item()

    @torch.no_grad()
    def validate(self, make_batch, n_points):
        x, y = make_batch()
        return F.mse_loss(self.model(x, n_points), y).item()
