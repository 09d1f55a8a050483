"""gradguard's runtime monitor: explains autograd's "backward through the graph a second time" error.

Nothing here imports torch at import time. `monitor.install()` patches the one function every backward
and grad call goes through, keeps a small record per call, and analyses the graph only once autograd
raises. See `monitor` (ways in), `inspect` and `carrier` (the analysis), `diagnosis` (the result and
its JSON), `render` (what users read) and `runner` (`gradguard run`).
"""
