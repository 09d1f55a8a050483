import torch.nn as nn


class ConvNet1d(nn.Module):
    def __init__(self, channels=1, n_classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(channels, 8, 3, padding=1), nn.ReLU(),
            nn.Conv1d(8, 8, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool1d(4),
        )
        self.classifier = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))
