"""Align two views of the same items (e.g. two sensors) with a CLIP-style contrastive objective."""
import torch

from dualenc import ContrastiveTrainer, DualEncoder


def paired_views(n, latent=6):
    z = torch.randn(n, latent)
    a = torch.tanh(z @ torch.randn(latent, 12)) + 0.1 * torch.randn(n, 12)
    b = z @ torch.randn(latent, 8) + 0.1 * torch.randn(n, 8)
    return a, b


def main():
    torch.manual_seed(17)
    a, b = paired_views(256)
    model = DualEncoder(dim_a=12, dim_b=8)
    trainer = ContrastiveTrainer(model)
    history = trainer.fit(a, b, epochs=5)
    acc = trainer.retrieval_accuracy(a[:64], b[:64])
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {history[-1]:.4f} top1 {acc:.4f} temp {1 / model.log_inv_temp.exp().item():.4f} "
          f"param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
