"""Fixed twin of ../buggy/fit_example.py: the same program, except that layers.ElementwiseBijection
divides inside the Parameter call, so `value` is a registered leaf, as commit f32e8a8 does.
torch 2.13: runs and prints "ok". gradguard at 1eed1da: nothing reported.
"""

import torch

from flows import Flow
from layers import RealNVP

torch.manual_seed(0)
x_train = torch.randn(100, 4) * 2 + 4
flow = Flow(RealNVP(4, n_layers=2))
flow.fit(x_train)
print("ok")
