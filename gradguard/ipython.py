"""`%load_ext gradguard`: the runtime monitor in IPython and Jupyter.

Loading installs the monitor; when autograd raises, the exception's `_render_traceback_` shows the
standard traceback followed by gradguard's panel (HTML in Jupyter, ANSI in a terminal IPython).
Unloading restores torch exactly.
"""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """Install the runtime monitor for this IPython session."""
    from gradguard.runtime.monitor import install

    install()


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the runtime monitor installed by `load_ipython_extension`."""
    from gradguard.runtime.monitor import uninstall

    uninstall()
