"""Learn which input features to keep: a relaxed feature gate whose keep-probabilities come from a
Bernoulli distribution over learned logits, built once with the model, as a fixed prior would be."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 128
N_FEATURES = 8
EPOCHS = 3
BATCH_SIZE = 32
SPARSITY = 1e-2


class GatedRegression(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.gate_logits = nn.Parameter(torch.zeros(n_features))
        self.gate = Bernoulli(logits=self.gate_logits)
        self.linear = nn.Linear(n_features, 1)

    def forward(self, x):
        keep = self.gate.probs
        return self.linear(x * keep).squeeze(-1), keep


x = torch.randn(N_SAMPLES, N_FEATURES)
y = x[:, :3].sum(dim=1) + 0.1 * torch.randn(N_SAMPLES)
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = GatedRegression(N_FEATURES)
opt = torch.optim.Adam(model.parameters(), lr=5e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        pred, keep = model(xb)
        loss = F.mse_loss(pred, yb) + SPARSITY * keep.sum()
        opt.zero_grad()
        loss.backward()  # expect: GG006
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
