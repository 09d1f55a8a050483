import logging

import torch

log = logging.getLogger("train")


def backprop(loss, optimizer, retain=False, clip=None, params=None):
    """zero_grad / backward / (clip) / step in one place."""
    optimizer.zero_grad()
    loss.backward(retain_graph=retain)
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)
