"""An object's attribute set to a literal flag (`RotaryEmbedding(dim, learned_freq=True)` keeps
`self.learned_freq = learned_freq`) decides the tests its methods make on it; a flag set differently on
different paths decides nothing."""

from __future__ import annotations

import textwrap

import pytest

from gradguard.analysis import analyze

ROTARY = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, learned_freq=False):
            super().__init__()
            freqs = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
            self.learned_freq = learned_freq
            if learned_freq:
                self.freqs = nn.Parameter(freqs)
            else:
                self.register_buffer("freqs", freqs)
            self.cache = {}

        def forward(self, seq_len):
            if CACHED:
                return self.cache[seq_len]
            t = torch.arange(seq_len, dtype=self.freqs.dtype)
            freqs = torch.einsum("i,j->ij", t, self.freqs)
            self.cache[seq_len] = freqs
            return freqs


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary = RotaryEmbedding(8, learned_freq=LEARNED)
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            freqs = self.rotary(x.shape[1])
            return self.proj(x * freqs.cos().repeat(1, 2))


    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(10):
        loss = model(torch.randn(2, 5, 8)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    """)


@pytest.mark.parametrize(("cached", "learned", "flagged"), [
    ("seq_len in self.cache", "True", True),
    ("not self.learned_freq and seq_len in self.cache", "True", False),
    ("seq_len in self.cache", "False", False),
])
def test_a_flag_the_object_was_built_with_decides_its_methods_tests(cached: str, learned: str, flagged: bool) -> None:
    source = ROTARY.replace("CACHED", cached).replace("LEARNED", learned)
    codes = [d.code for d in analyze(source)]
    assert bool(codes) == flagged, codes
