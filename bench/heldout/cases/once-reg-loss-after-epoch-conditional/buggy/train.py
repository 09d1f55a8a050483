"""Factorisation-machine style CTR model; the embedding L2 penalty is switched on after warm-up."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_FIELDS, N_FEATURES, EMB_DIM = 4, 40, 8
EPOCHS = 3
REG_START_EPOCH = 1
L2_REG = 1e-4


class FM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(N_FEATURES, EMB_DIM)
        self.linear = nn.Embedding(N_FEATURES, 1)
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, idx):
        emb = self.embedding(idx)  # (batch, fields, dim)
        square_of_sum = emb.sum(1).pow(2)
        sum_of_square = emb.pow(2).sum(1)
        interaction = 0.5 * (square_of_sum - sum_of_square).sum(1)
        return self.bias + self.linear(idx).sum((1, 2)) + interaction


idx_all = torch.randint(0, N_FEATURES, (256, N_FIELDS))
clicks = ((idx_all % 7 == 0).sum(1) > 0).float()
batches = list(zip(idx_all.split(32), clicks.split(32)))

model = FM()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)

reg_loss = L2_REG * sum(p.pow(2).sum() for p in model.embedding.parameters())

for epoch in range(EPOCHS):
    epoch_loss = 0.0
    for xb, yb in batches:
        logit = model(xb)
        loss = F.binary_cross_entropy_with_logits(logit, yb)
        if epoch >= REG_START_EPOCH:
            loss = loss + reg_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()

with torch.no_grad():
    auc_proxy = (torch.sigmoid(model(idx_all))[clicks == 1].mean()
                 - torch.sigmoid(model(idx_all))[clicks == 0].mean()).item()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {epoch_loss / len(batches):.6f} gap {auc_proxy:.6f} param_sum {param_sum:.6f}")
