"""An exponential moving average of a model's weights, kept as a frozen copy of the model (the
teacher of mean-teacher training, the averaged model of Polyak averaging)."""

import copy


class ModelEMA:
    def __init__(self, model, decay=0.95):
        self.decay = decay
        self.module = copy.deepcopy(model)
        self.module.requires_grad_(False)

    def update(self, model):
        for ema_param, param in zip(self.module.parameters(), model.parameters()):
            ema_param.mul_(self.decay).add_(param, alpha=1 - self.decay)

    def __call__(self, x):
        return self.module(x)
