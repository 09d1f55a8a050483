from collections import defaultdict

import torch.nn as nn


class ActivationRecorder:
    """Registers forward hooks on every module of the given types and keeps their outputs."""

    def __init__(self, model, types=(nn.ReLU,)):
        self.store = defaultdict(list)
        self.handles = []
        for name, module in model.named_modules():
            if isinstance(module, types):
                self.handles.append(module.register_forward_hook(self._hook(name)))

    def _hook(self, name):
        def fn(module, inputs, output):
            if module.training:
                self.store[name].append(output)
        return fn

    def activations(self):
        return [a for outs in self.store.values() for a in outs]

    def clear(self):
        self.store.clear()

    def remove(self):
        for h in self.handles:
            h.remove()
