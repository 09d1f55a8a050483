"""Graph-convolution layers (the shape of NNR's layers.py at 03c57b8).

Each layer applies a linear map to the graph-aggregated features, a ReLU, and, when `residual` is
set (the default configuration), adds its input to the ReLU's result in place. The ReLU keeps its
output for the backward, so the in-place add invalidates it.
"""

import torch
from torch import nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, dim, residual=False):
        super().__init__()
        self.residual = residual
        self.W = nn.Linear(dim, dim)

    def forward(self, feature, graph):
        out = F.relu(self.W(torch.bmm(graph, feature)))
        if self.residual:
            out += feature  # buggy: writes into the ReLU's saved output
        return out


class GCN(nn.Module):
    def __init__(self, dim, num_layers=2, residual=False):
        super().__init__()
        self.layers = nn.ModuleList(GCNLayer(dim, residual) for _ in range(num_layers))
        self.dropout = nn.Dropout(0.1, inplace=True)

    def forward(self, feature, graph):
        out = feature
        for layer in self.layers[:-1]:
            out = self.dropout(layer(out, graph))
        return self.layers[-1](out, graph)
