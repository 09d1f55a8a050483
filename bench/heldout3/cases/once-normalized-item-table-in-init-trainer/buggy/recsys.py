import torch.nn as nn
import torch.nn.functional as F


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, dim=16):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)
        self.user_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def user_vector(self, users):
        return F.normalize(self.user_mlp(self.user_emb(users)), dim=-1)

    def item_table(self):
        return F.normalize(self.item_emb.weight, dim=-1)
