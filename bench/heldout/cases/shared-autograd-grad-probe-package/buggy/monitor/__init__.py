from .grads import layer_grad_norms

__all__ = ["layer_grad_norms"]
