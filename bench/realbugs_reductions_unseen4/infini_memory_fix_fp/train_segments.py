"""Fix-commit false positive of Beomi/InfiniTransformer (fix 122a4dffee48cae99dac639503c9cdb0c1a27e6a).

At the fix commit the attention layer returns its memory detached (memory_attention.py here), and
the model hands it up through the decoder layer as the last items of a tuple that grows only when
the memory is not None (`outputs += (memory, norm_term)`), read back with a negative index
(`memory = layer_outputs[-2]` in infini_gemma/modeling_infini_gemma.py). This program runs under
torch 2.13 (prints "ok"): nothing carries a graph across segments. gradguard at d2e1e24 reports
GG003 (error) at the `loss.backward()` below, "`layer_outputs` carries the previous iteration's
graph", as it reports GG003 at train.gemma.infini.noclm.py:744 of the fix commit. Dropping the
Layer/Model wrappers (returning the attention's output directly) removes the finding.
"""
import torch
from torch import nn
from memory_attention import MemoryAttention

class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = MemoryAttention(dim)
    def forward(self, x, memory=None):
        h, memory = self.attn(x, memory=memory)
        outputs = (h,)
        if memory is not None:
            outputs += (memory,)
        return outputs

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layer = Layer(dim)
    def forward(self, x, memory=None):
        layer_outputs = self.layer(x, memory=memory)
        return layer_outputs[0], layer_outputs[-1]

model = Model(16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(2):
    batch = torch.randn(2, 24, 16)
    memory = None
    for segment in torch.tensor_split(batch, [8, 16], dim=1):
        out, memory = model(segment, memory=memory)
        loss = out.pow(2).mean()
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print("ok")
