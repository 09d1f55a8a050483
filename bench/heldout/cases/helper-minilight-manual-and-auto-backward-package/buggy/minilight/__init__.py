from .core import Fitter, LightModule

__all__ = ["Fitter", "LightModule"]
