import torch
import torch.nn as nn
import torch.nn.functional as F


class DiceLoss(nn.Module):
    def __init__(self, eps=1.0):
        super().__init__()
        self.eps = eps

    def forward(self, logits, target):
        prob = torch.sigmoid(logits)
        inter = (prob * target).sum(-1)
        return 1 - ((2 * inter + self.eps) / (prob.sum(-1) + target.sum(-1) + self.eps)).mean()


class BoundaryLoss(nn.Module):
    """Penalise disagreement between predicted and true edges of a 1-D mask."""

    def forward(self, logits, target):
        prob = torch.sigmoid(logits)
        return F.l1_loss(prob[..., 1:] - prob[..., :-1], target[..., 1:] - target[..., :-1])


def build_criteria(cfg):
    return {
        "bce": (nn.BCEWithLogitsLoss(), cfg["w_bce"]),
        "dice": (DiceLoss(), cfg["w_dice"]),
        "boundary": (BoundaryLoss(), cfg["w_boundary"]),
    }
