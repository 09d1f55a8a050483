"""Train an RNN with an orthogonal recurrent matrix (the matrix exponential of a skew-symmetric
parametrization) on a running-sum task; the parametrized matrix is cached for one unrolled step."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SEQUENCES = 64
SEQ_LEN = 8
HIDDEN = 8
EPOCHS = 2
BATCH_SIZE = 16


class Orthogonal(nn.Module):
    def forward(self, weight):
        upper = weight.triu(1)
        return torch.matrix_exp(upper - upper.T)


class OrthogonalRNN(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.inp = nn.Linear(1, hidden)
        self.rec = nn.Linear(hidden, hidden, bias=False)
        P.register_parametrization(self.rec, "weight", Orthogonal())
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.rec.in_features)
        outputs = []
        for t in range(x.shape[1]):
            h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
            outputs.append(self.out(h))
        return torch.stack(outputs, dim=1)


x = torch.randn(N_SEQUENCES, SEQ_LEN, 1)
y = x.cumsum(dim=1) / SEQ_LEN**0.5
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = OrthogonalRNN(HIDDEN)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        with P.cached():
            loss = F.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
