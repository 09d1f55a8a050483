import torch
import torch.nn.functional as F


def clip_loss(logits):
    target = torch.arange(logits.size(0))
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


class ContrastiveTrainer:
    def __init__(self, model, lr=3e-3):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
        self.history = []

    def fit(self, a, b, epochs, batch_size=32):
        for epoch in range(epochs):
            perm = torch.randperm(a.size(0))
            for i in range(0, a.size(0), batch_size):
                idx = perm[i:i + batch_size]
                loss = clip_loss(self.model(a[idx], b[idx]))
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.history.append(loss.item())
        return self.history

    @torch.no_grad()
    def retrieval_accuracy(self, a, b):
        logits = self.model(a, b)
        return (logits.argmax(-1) == torch.arange(a.size(0))).float().mean().item()
