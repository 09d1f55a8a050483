class FeatureTap:
    """Keeps the output of the named submodules from the latest forward."""

    def __init__(self, model, names):
        self.features = {}
        modules = dict(model.named_modules())
        self.handles = [modules[n].register_forward_hook(self._save(n)) for n in names]

    def _save(self, name):
        def hook(module, inp, out):
            self.features[name] = out
        return hook

    def reset(self):
        self.features = {}

    def close(self):
        for h in self.handles:
            h.remove()
