"""MoCo-style contrastive pre-training on synthetic vectors with two noisy views."""
import torch
import torch.nn.functional as F

from moco import MoCo
from moco.encoders import mlp_encoder

torch.manual_seed(0)

IN_DIM = 20
BATCH = 16
EPOCHS = 2


def two_views(x):
    return x + 0.1 * torch.randn_like(x), x * (torch.rand_like(x) > 0.1).float()


def knn_accuracy(encoder, x, labels):
    """1-NN accuracy of the embeddings against the labels of the generating clusters."""
    with torch.no_grad():
        z = F.normalize(encoder(x), dim=1)
        sim = z @ z.t() - 2 * torch.eye(len(x))
        return (labels[sim.argmax(1)] == labels).float().mean().item()


cluster = torch.randint(0, 4, (128,))
data = torch.randn(4, IN_DIM)[cluster] + 0.3 * torch.randn(128, IN_DIM)
model = MoCo(mlp_encoder(IN_DIM))
optimizer = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)

for epoch in range(EPOCHS):
    for x in data.split(BATCH):
        im_q, im_k = two_views(x)
        output, target = model(im_q, im_k)
        loss = F.cross_entropy(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

acc = knn_accuracy(model.encoder_q, data, cluster)
param_sum = sum(p.sum().item() for p in model.encoder_q.parameters())
print(f"final loss {loss.item():.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
