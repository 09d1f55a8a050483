"""Train a small image classifier with mmcv's EpochBasedRunner. The runner calls the model's
`train_step` and its OptimizerHook (registered by `optimizer_config`) backward()s the `loss` that
train_step returns, after each iteration, and steps the optimizer."""

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmcv.runner import BaseModule, EpochBasedRunner
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 4


class TinyClassifier(BaseModule):
    def __init__(self, num_classes, init_cfg=None):
        super().__init__(init_cfg)
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, num_classes)

    def forward(self, img):
        return self.head(self.features(img).flatten(1))

    def train_step(self, data, optimizer):
        img, label = data
        loss = F.cross_entropy(self(img), label)
        return dict(loss=loss, log_vars={"loss": loss.item()}, num_samples=img.shape[0])

    def val_step(self, data, optimizer=None):
        img, label = data
        with torch.no_grad():
            accuracy = (self(img).argmax(1) == label).float().mean()
        return dict(log_vars={"accuracy": accuracy.item()}, num_samples=img.shape[0])


images = torch.randn(64, 3, 16, 16)
labels = torch.randint(0, NUM_CLASSES, (64,))
loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=True)

model = TinyClassifier(NUM_CLASSES)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
runner = EpochBasedRunner(model, optimizer=optimizer, work_dir="./work_dir",
                          logger=logging.getLogger("train"), max_epochs=2)
runner.register_training_hooks(lr_config=dict(policy="step", step=[1]), optimizer_config=dict(grad_clip=None))
runner.run([loader], [("train", 1)])
