"""Reduction of Beomi/InfiniTransformer train.gemma.infini.noclm.py, lines 732-746 at c38298c.

Repository Beomi/InfiniTransformer; buggy c38298c2144ee40ac187679e546d8950d4f316de, fix
122a4dffee48cae99dac639503c9cdb0c1a27e6a; failing line train.gemma.infini.noclm.py:743 (the per-segment
`accelerator.backward(loss)`), here the `loss.backward()` below.

Each batch is split into segments; the memory returned by the model for one segment is passed to
the model for the next segment, and each segment's loss is backward-ed on its own. The memory comes
back from memory_attention.py with the graph of the segments that built it, so the second segment's
backward runs into the first segment's freed graph: "Trying to backward through the graph a second
time" (torch 2.13). The fix is made inside the model module (return the memory detached), not in this
loop. gradguard at d2e1e24 reports GG003 at the backward below (found); with the attention's return
detached and nothing else changed it reports nothing.
"""

import torch

from memory_attention import MemoryAttention

torch.manual_seed(0)
model = MemoryAttention(16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(2):
    batch = torch.randn(2, 24, 16)
    segments = torch.tensor_split(batch, [8, 16], dim=1)
    memory = None
    for segment in segments:
        out, memory = model(segment, memory=memory)
        loss = out.pow(2).mean()
        loss.backward()  # buggy: raises here at the second segment
    optimizer.step()
    optimizer.zero_grad()
print("ok")
