import torch

from model import MultiTaskNet
from trainer import Trainer


def synthetic(n, g):
    x = torch.randn(n, 12, generator=g)
    depth = (x[:, :3].sum(1) * 2.0).exp().clamp(max=20)
    semantic = (x[:, 3:7] * 3).argmax(1)
    return x, {"depth": depth, "semantic": semantic}


if __name__ == "__main__":
    torch.manual_seed(8)
    g = torch.Generator().manual_seed(8)
    trainer = Trainer(MultiTaskNet())
    val_x, val_t = synthetic(64, g)
    for step in range(40):
        x, t = synthetic(32, g)
        loss = trainer.train_step(x, t)
        if step % 10 == 0:
            print(f"step {step} balanced loss {loss:.4f}")
    metrics = trainer.evaluate(val_x, val_t)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"loss {loss:.4f} depth {metrics['depth']:.4f} semantic {metrics['semantic']:.4f} param_sum {param_sum:.4f}")
