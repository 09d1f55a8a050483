import torch


class Engine:
    """Owns the optimizer, gradient clipping and the step counter."""

    def __init__(self, model, optimizer, max_grad_norm=1.0):
        self.model = model
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm
        self.global_step = 0

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.global_step += 1
        return loss.detach()
