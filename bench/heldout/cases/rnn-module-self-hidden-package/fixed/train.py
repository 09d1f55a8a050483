"""Gender classification from synthetic fMRI ROI time series with an LSTM."""
import torch
import torch.nn as nn

from fmri import FMRILSTM, make_subjects
from fmri.data import batches

torch.manual_seed(0)

BATCH_SIZE = 16
N_REGIONS = 10
EPOCHS = 3


def accuracy(probs, y):
    return ((probs > 0.5).float() == y).float().mean().item()


x_train, y_train = make_subjects(96, 20, N_REGIONS)

model = FMRILSTM(N_REGIONS, 32, BATCH_SIZE)
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)

model.train()
for epoch in range(EPOCHS):
    running, accs = 0.0, []
    for x, y in batches(x_train, y_train, BATCH_SIZE):
        model.hidden = model.init_hidden(x.size(0))
        optimizer.zero_grad()
        probs = model(x)
        loss = criterion(probs, y)
        loss.backward()
        optimizer.step()
        running += loss.item()
        accs.append(accuracy(probs, y))

model.eval()
x_val, y_val = make_subjects(BATCH_SIZE, 20, N_REGIONS)
with torch.no_grad():
    model.hidden = model.init_hidden(BATCH_SIZE)
    val_acc = accuracy(model(x_val), y_val)

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {running:.6f} acc {sum(accs) / len(accs):.4f} val_acc {val_acc:.4f} param_sum {param_sum:.6f}")
