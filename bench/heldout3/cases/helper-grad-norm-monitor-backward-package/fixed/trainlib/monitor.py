import math


class GradMonitor:
    """Records per-layer gradient norms of a loss every few steps (for spotting dead or exploding layers)."""

    def __init__(self, model, every=5):
        self.model, self.every = model, every
        self.records = []

    def maybe_record(self, loss, step):
        if step % self.every != 0:
            return None
        self.model.zero_grad()
        loss.backward(retain_graph=True)
        norms = {name: p.grad.norm().item() for name, p in self.model.named_parameters() if p.grad is not None}
        self.model.zero_grad()
        total = math.sqrt(sum(v * v for v in norms.values()))
        self.records.append((step, total))
        return total
