import torch
import torch.nn as nn


class LightModule(nn.Module):
    """A tiny Lightning-like module: training_step returns the loss to optimise."""

    automatic_optimization = True

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def configure_optimizers(self):
        raise NotImplementedError

    def manual_backward(self, loss):
        loss.backward()

    def log(self, name, value):
        self.logged = getattr(self, "logged", {})
        self.logged[name] = float(value)


class Fitter:
    def __init__(self, max_epochs=1, gradient_clip_val=None):
        self.max_epochs = max_epochs
        self.gradient_clip_val = gradient_clip_val

    def fit(self, module, batches):
        optimizer = module.configure_optimizers()
        module.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(batches):
                loss = module.training_step(batch, batch_idx)
                if module.automatic_optimization:
                    optimizer.zero_grad()
                    loss.backward()
                    if self.gradient_clip_val is not None:
                        torch.nn.utils.clip_grad_norm_(module.parameters(), self.gradient_clip_val)
                    optimizer.step()
        return module
