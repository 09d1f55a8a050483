"""The detector module loaded by name (the shape of H3DNet's models/hdnet.py)."""

import torch
from torch import nn

from proposal_refine import ProposalModuleRefine


class HDNet(nn.Module):
    def __init__(self, num_class=3, dim=16):
        super().__init__()
        self.backbone = nn.Conv1d(3, dim, 1)
        self.surface = nn.Conv1d(dim, 3 * dim, 1)
        self.pnet_final = ProposalModuleRefine(3 * dim, dim, num_class + 4)

    def forward(self, points):
        features = torch.relu(self.backbone(points))
        return self.pnet_final(self.surface(features), features)


def get_loss(end_points, target):
    return (end_points - target).pow(2).mean()
