import torch
import torch.nn.functional as F

LOSSES = {
    "depth": lambda out, y: F.smooth_l1_loss(out.squeeze(-1), y),
    "semantic": lambda out, y: F.cross_entropy(out, y),
}


class Trainer:
    """Balances the task losses by dividing each by its running mean (scale-invariant weighting)."""

    def __init__(self, model, lr=2e-3, momentum=0.9):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=40)
        self.momentum = momentum
        self.running = {}
        self.step_count = 0

    def balanced_loss(self, outputs, targets):
        total = 0.0
        for task, fn in LOSSES.items():
            loss = fn(outputs[task], targets[task])
            if task not in self.running:
                self.running[task] = loss.detach()
            else:
                self.running[task] = self.momentum * self.running[task] + (1 - self.momentum) * loss
            total = total + loss / (self.running[task] + 1e-8)
        return total

    def train_step(self, x, targets):
        self.model.train()
        outputs = self.model(x)
        loss = self.balanced_loss(outputs, targets)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.sched.step()
        self.step_count += 1
        return loss.item()

    @torch.no_grad()
    def evaluate(self, x, targets):
        self.model.eval()
        out = self.model(x)
        return {t: fn(out[t], targets[t]).item() for t, fn in LOSSES.items()}
