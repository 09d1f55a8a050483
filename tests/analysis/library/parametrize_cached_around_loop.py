"""Train a tied-weight autoencoder whose dictionary rows are kept at unit norm by a
parametrization; the parametrized weight is used twice per forward (encode, decode)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 128
N_FEATURES = 12
N_ATOMS = 6
EPOCHS = 2
BATCH_SIZE = 32


class UnitRows(nn.Module):
    def forward(self, weight):
        return weight / weight.norm(dim=1, keepdim=True)


class TiedAutoencoder(nn.Module):
    def __init__(self, n_features, n_atoms):
        super().__init__()
        self.encoder = nn.Linear(n_features, n_atoms)
        P.register_parametrization(self.encoder, "weight", UnitRows())
        self.decoder_bias = nn.Parameter(torch.zeros(n_features))

    def forward(self, x):
        codes = F.relu(self.encoder(x))
        return codes @ self.encoder.weight + self.decoder_bias


atoms = F.normalize(torch.randn(N_ATOMS, N_FEATURES), dim=1)
mixing = torch.rand(N_SAMPLES, N_ATOMS)
data = mixing @ atoms + 0.05 * torch.randn(N_SAMPLES, N_FEATURES)
loader = DataLoader(TensorDataset(data), batch_size=BATCH_SIZE, shuffle=True)

model = TiedAutoencoder(N_FEATURES, N_ATOMS)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

with P.cached():
    for epoch in range(EPOCHS):
        total = 0.0
        for (xb,) in loader:
            loss = F.mse_loss(model(xb), xb)
            opt.zero_grad()
            loss.backward()  # expect: GG006
            opt.step()
            total += loss.item()
        print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
