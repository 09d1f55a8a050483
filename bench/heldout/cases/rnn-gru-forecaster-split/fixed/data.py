import math

import torch


def make_series(n_steps, n_channels, batch_size):
    """Noisy sines with a different phase per channel and per sequence in the batch."""
    t = torch.arange(n_steps, dtype=torch.float32)
    phase = torch.rand(batch_size, 1, n_channels) * 2 * math.pi
    freq = torch.linspace(0.05, 0.2, n_channels)
    series = torch.sin(t[None, :, None] * freq + phase)
    return series + 0.05 * torch.randn_like(series)


def windows(series, length):
    """Consecutive (input, target) windows; the target is the input shifted by one step."""
    for start in range(0, series.size(1) - length - 1, length):
        x = series[:, start:start + length]
        y = series[:, start + 1:start + length + 1]
        yield x, y
