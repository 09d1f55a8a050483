import torch.nn as nn


class EncoderClassifier(nn.Module):
    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.encoder(x))
