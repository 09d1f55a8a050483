import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLinear(nn.Linear):
    """Linear layer whose weight is multiplied by a learnable soft mask."""

    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.mask_logits = nn.Parameter(torch.full((out_features, in_features), 2.0))

    def soft_mask(self, temperature):
        return torch.sigmoid(self.mask_logits / temperature)

    def forward(self, x, mask):
        return F.linear(x, self.weight * mask, self.bias)
