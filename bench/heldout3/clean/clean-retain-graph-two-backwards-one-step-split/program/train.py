import torch

from losses import feature_distance, seg_loss
from model import SegNet1D

cfg = {"iters": 25, "batch": 8, "length": 24, "fd_weight": 0.1, "lr": 3e-3, "log": 5}


def sample(batch, length):
    labels = torch.randint(0, 3, (batch, 1)).repeat(1, length)
    labels[:, length // 2:] = (labels[:, length // 2:] + 1) % 3
    x = labels.float().unsqueeze(1) + 0.3 * torch.randn(batch, 1, length)
    return x, labels


if __name__ == "__main__":
    torch.manual_seed(15)
    model = SegNet1D()
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"] * 10, momentum=0.9)
    for it in range(cfg["iters"]):
        x, y = sample(cfg["batch"], cfg["length"])
        optimizer.zero_grad()
        logits, proj = model(x)
        loss_seg = seg_loss(logits, y)
        # the segmentation loss first; the graph is kept for the feature-distance term
        loss_seg.backward(retain_graph=True)
        with torch.no_grad():
            _, anchor = model(x + 0.0)
        noisy_logits, noisy_proj = model(x + 0.2 * torch.randn_like(x))
        loss_fd = cfg["fd_weight"] * (feature_distance(proj, anchor) + feature_distance(noisy_proj, anchor))
        loss_fd.backward()
        optimizer.step()
        if it % cfg["log"] == 0:
            print(f"it {it} seg {loss_seg.item():.4f} fd {loss_fd.item():.4f}")
    model.eval()
    with torch.no_grad():
        x, y = sample(64, cfg["length"])
        acc = (model(x)[0].argmax(1) == y).float().mean().item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"seg {loss_seg.item():.4f} acc {acc:.3f} param_sum {param_sum:.4f}")
