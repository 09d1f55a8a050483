import torch
import torch.nn.functional as F

from .monitor import GradMonitor


class Engine:
    def __init__(self, model, optimizer, scheduler=None, monitor_every=5):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.monitor = GradMonitor(model, every=monitor_every)
        self.step = 0

    def train_batch(self, x, y):
        self.model.train()
        loss = F.cross_entropy(self.model(x), y)
        gnorm = self.monitor.maybe_record(loss, self.step)
        if gnorm is not None:
            print(f"step {self.step} loss {loss.item():.4f} grad_norm {gnorm:.4f}")
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        self.step += 1
        return loss.item()

    @torch.no_grad()
    def accuracy(self, x, y):
        self.model.eval()
        return (self.model(x).argmax(1) == y).float().mean().item()
