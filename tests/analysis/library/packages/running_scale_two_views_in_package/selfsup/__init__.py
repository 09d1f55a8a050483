"""Self-supervised encoders."""
