"""Train a cosine-similarity classifier: an encoder and one learned prototype per class."""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 96
IN_FEATURES = 12
EMBED_DIM = 8
N_CLASSES = 4
EPOCHS = 2
BATCH_SIZE = 24
SCALE = 10.0


class CosineClassifier(nn.Module):
    def __init__(self, in_features, embed_dim, n_classes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_features, 32), nn.GELU(), nn.Linear(32, embed_dim))
        self.prototypes = nn.Parameter(torch.randn(n_classes, embed_dim))

    @functools.cached_property
    def unit_prototypes(self):
        return F.normalize(self.prototypes, dim=1)

    def forward(self, x):
        embedding = F.normalize(self.encoder(x), dim=1)
        return SCALE * embedding @ self.unit_prototypes.T


def train(model, loader, opt):
    for epoch in range(EPOCHS):
        correct = 0
        for xb, yb in loader:
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()  # expect: GG006
            opt.step()
            correct += (logits.argmax(dim=1) == yb).sum().item()
        print(f"epoch {epoch}: accuracy {correct / N_SAMPLES:.4f}")
    return loss


if __name__ == "__main__":
    centers = 2.0 * torch.randn(N_CLASSES, IN_FEATURES)
    labels = torch.randint(0, N_CLASSES, (N_SAMPLES,))
    features = centers[labels] + torch.randn(N_SAMPLES, IN_FEATURES)
    loader = DataLoader(TensorDataset(features, labels), batch_size=BATCH_SIZE, shuffle=True)

    model = CosineClassifier(IN_FEATURES, EMBED_DIM, N_CLASSES)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss = train(model, loader, opt)
    print(f"{loss.item():.6f}")
