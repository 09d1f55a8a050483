"""gradguard: find and explain PyTorch's "backward through the graph a second time" bugs.

The lint side (`gradguard lint`) never imports torch. The runtime monitor does, lazily, the first time
`install()`, `uninstall()` or `monitor()` is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from gradguard.runtime.monitor import install, monitor, uninstall

__all__ = ["__version__", "install", "uninstall", "monitor", "load_ipython_extension"]


def __getattr__(name: str) -> Any:
    if name in ("install", "uninstall", "monitor"):
        from gradguard.runtime import monitor as _monitor

        return getattr(_monitor, name)
    raise AttributeError(f"module 'gradguard' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext gradguard`: install the runtime monitor in this IPython session."""
    from gradguard.ipython import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext gradguard`: restore torch exactly as it was."""
    from gradguard.ipython import unload_ipython_extension as _unload

    _unload(ipython)
