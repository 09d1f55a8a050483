"""A name -> constructor registry (the role timm's create_model/register_model play in MAE-DFER)."""

_MODELS = {}


def register_model(fn):
    _MODELS[fn.__name__] = fn
    return fn


def create_model(name, **kwargs):
    return _MODELS[name](**kwargs)
