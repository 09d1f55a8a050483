import torch


def make_optimizers(model, lr_a=1e-3, lr_b=5e-4):
    """One optimizer per task; both fine-tune the shared encoder."""
    opt_a = torch.optim.Adam(list(model.encoder.parameters()) + list(model.head_a.parameters()), lr=lr_a)
    opt_b = torch.optim.Adam(list(model.encoder.parameters()) + list(model.head_b.parameters()), lr=lr_b)
    return opt_a, opt_b
