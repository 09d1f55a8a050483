import torch
import torch.nn.functional as F


class OnlineTrainer:
    """Reads an unbounded stream one step at a time; labels arrive only now and then."""

    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.h = model.initial_state()
        self.updates = 0
        self.last_loss = float("nan")

    def observe(self, x, label=None):
        logits, self.h = self.model(x, self.h)
        if label is not None:
            loss = F.cross_entropy(logits, label)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.h = self.h.detach()
            self.updates += 1
            self.last_loss = loss.item()
        return logits.argmax(1)
