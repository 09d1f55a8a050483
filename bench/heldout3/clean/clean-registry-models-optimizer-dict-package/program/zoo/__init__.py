from .registry import build_model, MODEL_REGISTRY
from . import models  # noqa: F401  (registers the architectures)
