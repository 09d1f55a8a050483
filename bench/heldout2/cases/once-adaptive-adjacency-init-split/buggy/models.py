import torch
import torch.nn as nn
import torch.nn.functional as F


class AdaptiveGraphConv(nn.Module):
    """Graph convolution over a learned adjacency softmax(relu(E1 @ E2^T)) (Graph WaveNet style)."""

    def __init__(self, n_nodes, in_dim, out_dim, emb_dim=6):
        super().__init__()
        self.src_emb = nn.Parameter(torch.randn(n_nodes, emb_dim) * 0.5)
        self.dst_emb = nn.Parameter(torch.randn(n_nodes, emb_dim) * 0.5)
        self.self_lin = nn.Linear(in_dim, out_dim)
        self.nbr_lin = nn.Linear(in_dim, out_dim, bias=False)
        self.adj = F.softmax(F.relu(self.src_emb @ self.dst_emb.T), dim=1)

    def forward(self, x):
        return self.self_lin(x) + self.nbr_lin(self.adj @ x)


class Forecaster(nn.Module):
    def __init__(self, n_nodes, hidden=16):
        super().__init__()
        self.gc1 = AdaptiveGraphConv(n_nodes, 2, hidden)
        self.gc2 = AdaptiveGraphConv(n_nodes, hidden, 1)

    def forward(self, x):
        return self.gc2(torch.relu(self.gc1(x))).squeeze(-1)
