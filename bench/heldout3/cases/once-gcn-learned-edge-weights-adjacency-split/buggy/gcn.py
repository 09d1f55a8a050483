import torch
import torch.nn as nn
import torch.nn.functional as F

from graph_utils import sym_normalize


class EdgeWeightedGCN(nn.Module):
    """Two-layer GCN that also learns a positive weight per edge."""

    def __init__(self, n_edges, n_nodes, n_in, n_hid, n_out, dropout=0.2):
        super().__init__()
        self.edge_logit = nn.Parameter(torch.zeros(n_edges))
        self.n_nodes = n_nodes
        self.lin1, self.lin2 = nn.Linear(n_in, n_hid), nn.Linear(n_hid, n_out)
        self.dropout = dropout

    def adjacency(self, edge_index):
        return sym_normalize(edge_index, F.softplus(self.edge_logit) * 2, self.n_nodes)

    def forward(self, x, adj):
        h = F.relu(adj @ self.lin1(x))
        h = F.dropout(h, self.dropout, self.training)
        return adj @ self.lin2(h)
