"""Semi-supervised training helpers."""
