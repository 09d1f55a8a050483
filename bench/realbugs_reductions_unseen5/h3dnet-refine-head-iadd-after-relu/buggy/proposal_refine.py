"""The final proposal head (the shape of H3DNet's models/proposal_module_refine.py at 9cc5c04):
relu(bn(conv(...))) and then the original proposal features added to it in place."""

from torch import nn
import torch.nn.functional as F


class ProposalModuleRefine(nn.Module):
    def __init__(self, in_dim=48, dim=16, out_dim=7):
        super().__init__()
        self.conv_refine1 = nn.Conv1d(in_dim, dim, 1)
        self.bn_refine1 = nn.BatchNorm1d(dim)
        self.conv_refine2 = nn.Conv1d(dim, dim, 1)
        self.conv_refine4 = nn.Conv1d(dim, out_dim, 1)

    def forward(self, combine_feature, original_feature):
        net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))
        net += original_feature  # buggy: the ReLU saved `net` for its backward
        net = F.relu(self.conv_refine2(net))
        return self.conv_refine4(net)
