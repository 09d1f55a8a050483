"""MoCo v1-style pre-training on synthetic clustered vectors."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from contrast import MoCo

torch.manual_seed(0)

IN_DIM = 20


def make_encoder(dim):
    return nn.Sequential(nn.Linear(IN_DIM, 64), nn.ReLU(), nn.Linear(64, dim))


def views(x):
    return x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)


def nn_accuracy(encoder, x, labels):
    with torch.no_grad():
        z = F.normalize(encoder(x), dim=1)
        sim = z @ z.t() - 2 * torch.eye(len(x))
        return (labels[sim.argmax(1)] == labels).float().mean().item()


clusters = torch.randint(0, 4, (128,))
data = torch.randn(4, IN_DIM)[clusters] + 0.3 * torch.randn(128, IN_DIM)
model = MoCo(make_encoder)
optimizer = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)

for epoch in range(2):
    for x in data.split(16):
        im_q, im_k = views(x)
        output, target = model(im_q, im_k)
        loss = F.cross_entropy(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

acc = nn_accuracy(model.encoder_q, data, clusters)
param_sum = sum(p.sum().item() for p in model.encoder_q.parameters())
print(f"final loss {loss.item():.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
