"""Self-supervised pre-training of an MLP encoder with a symmetric InfoNCE loss."""
import torch

from selfsup.model import SimCLRNet
from selfsup.trainer import SSLTrainer

IN_DIM = 24
BATCH = 32
EPOCHS = 2


def unlabeled_data(n):
    latent = torch.randn(n, 4)
    mixing = torch.randn(4, IN_DIM)
    return torch.tanh(latent @ mixing)


@torch.no_grad()
def alignment(model, x):
    model.eval()
    z1 = torch.nn.functional.normalize(model(x + 0.05 * torch.randn_like(x)), dim=1)
    z2 = torch.nn.functional.normalize(model(x + 0.05 * torch.randn_like(x)), dim=1)
    return (z1 * z2).sum(1).mean().item()


def main():
    torch.manual_seed(0)
    data = unlabeled_data(192)
    model = SimCLRNet(IN_DIM)
    trainer = SSLTrainer(model)
    for epoch in range(EPOCHS):
        for x in data.split(BATCH):
            loss = trainer.train_step(x)
    align = alignment(model, data[:64])
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} align {align:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
