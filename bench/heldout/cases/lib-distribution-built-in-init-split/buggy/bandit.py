import torch


class GaussianBandit:
    def __init__(self, means, std=0.5):
        self.means = torch.tensor(means)
        self.std = std

    def pull(self, arm):
        return float(self.means[arm] + self.std * torch.randn(()))
