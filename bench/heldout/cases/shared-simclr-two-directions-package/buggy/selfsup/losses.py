import torch
import torch.nn.functional as F


def info_nce(anchors, positives, temperature=0.2):
    """InfoNCE where the i-th positive is the match of the i-th anchor; the rest are negatives."""
    a = F.normalize(anchors, dim=1)
    p = F.normalize(positives, dim=1)
    logits = a @ p.t() / temperature
    targets = torch.arange(a.size(0))
    return F.cross_entropy(logits, targets)
