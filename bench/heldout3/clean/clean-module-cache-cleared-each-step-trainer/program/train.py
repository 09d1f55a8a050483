import torch

from trainer import Model, Trainer

if __name__ == "__main__":
    torch.manual_seed(23)
    trainer = Trainer(Model())
    for step in range(30):
        x = torch.randn(16, 10, 4).cumsum(1) * 0.3
        loss = trainer.train_step(x)
        if step % 10 == 0:
            print(f"step {step} recon {loss:.4f}")
    trainer.model.codebook.clear_cache()
    with torch.no_grad():
        x = torch.randn(64, 10, 4).cumsum(1) * 0.3
        val = torch.nn.functional.mse_loss(trainer.model(x), x).item()
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"recon {loss:.4f} val {val:.4f} param_sum {param_sum:.4f}")
