"""`import gradguard.auto`: one line at the top of a script or notebook installs the runtime monitor.

With `torch.multiprocessing.spawn` (DDP), child processes re-import the main script, so a top-level
`import gradguard.auto` installs the monitor in every rank.
"""

from gradguard.runtime.monitor import install

install()
