"""Reduction of davidnabergoj/torchflows at 3d4bbb8 (fix f32e8a8), after its notebook
notebooks/fitting_with_validation_data.ipynb: Flow(RealNVP(...)).fit(x). torch 2.13: "Trying to
backward through the graph a second time" in flows.Flow.fit, second batch: every forward reuses the
tensor layers.ElementwiseBijection built once in __init__, whose graph the first backward freed. The
fix (../fixed) divides inside the Parameter call so the attribute is a registered leaf.
gradguard at 1eed1da reports nothing for this program (missed, as on the repository).
"""

import torch

from flows import Flow
from layers import RealNVP

torch.manual_seed(0)
x_train = torch.randn(100, 4) * 2 + 4
flow = Flow(RealNVP(4, n_layers=2))
flow.fit(x_train)
print("ok")
