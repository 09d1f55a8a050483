import torch


def make_subjects(n_subjects, n_timepoints, n_regions):
    """Synthetic ROI time courses; the label depends on the mean of two regions."""
    x = torch.randn(n_subjects, n_timepoints, n_regions)
    y = (x[:, :, 0].mean(1) + x[:, :, 1].mean(1) > 0).float()
    return x, y


def batches(x, y, batch_size):
    for i in range(0, x.size(0) - batch_size + 1, batch_size):
        yield x[i:i + batch_size], y[i:i + batch_size]
