import torch.nn.functional as F


def seg_loss(logits, labels):
    return F.cross_entropy(logits, labels)


def feature_distance(proj, anchor_proj):
    """Pull the projected features of the noisy view towards those of the clean view."""
    return (F.normalize(proj, dim=1) - F.normalize(anchor_proj, dim=1)).pow(2).sum(1).mean()
