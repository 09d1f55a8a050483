"""Unsupervised feature learning: a non-parametric classifier over a memory of every sample."""

from .memory import NonParametricSoftmax

__all__ = ["NonParametricSoftmax"]
