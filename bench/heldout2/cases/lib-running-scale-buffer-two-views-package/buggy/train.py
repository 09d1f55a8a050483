"""Self-supervised SimSiam pre-training on synthetic 16-d signals."""
import torch

from siam.loop import pretrain
from siam.model import SimSiam

torch.manual_seed(47)
latent = torch.randn(512, 4)
data = torch.tanh(latent @ torch.randn(4, 16)) + 0.05 * torch.randn(512, 16)

model = SimSiam()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
losses = pretrain(model, data, optimizer, epochs=4)
param_sum = sum(p.sum().item() for p in model.parameters())
running = model.encoder[-1].running_std.mean().item()
print(f"final loss {losses[-1]:.4f} running_std {running:.4f} param_sum {param_sum:.4f}")
