import torch
import torch.nn.functional as F


class RetrievalTrainer:
    """Full-softmax retrieval training: every user is scored against the whole item catalogue."""

    def __init__(self, model, lr=0.05, temperature=0.1):
        self.model = model
        self.opt = torch.optim.Adagrad(model.parameters(), lr=lr)
        self.temperature = temperature
        self.items = model.item_table()

    def scores(self, users):
        return self.model.user_vector(users) @ self.items.t() / self.temperature

    def train_step(self, users, pos_items):
        loss = F.cross_entropy(self.scores(users), pos_items)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    @torch.no_grad()
    def recall_at(self, users, pos_items, k=5):
        items = self.model.item_table()
        s = self.model.user_vector(users) @ items.t()
        topk = s.topk(k, dim=1).indices
        return (topk == pos_items[:, None]).any(1).float().mean().item()
