class FeatureRecorder:
    """Keeps the latest output of the named submodules, via forward hooks."""

    def __init__(self, model, layer_names):
        self.features = {}
        self.handles = []
        modules = dict(model.named_modules())
        for name in layer_names:
            self.handles.append(modules[name].register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.features[name] = output
        return hook

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
