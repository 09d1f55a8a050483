"""Module containers built from an unpacked list (`nn.Sequential(*[Block(d) for _ in range(n)])`, the
usual way to stack blocks): calling the container runs the blocks' forward, with what they keep."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze


def _found(code: str) -> list[tuple[int, str]]:
    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(code)
    return [(d.span.start.row, d.code) for d in analyze(source)]


_BLOCKS = """
    class Block(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.table = nn.Parameter(torch.zeros(2 * 16 - 1))
            self._cache = {{}}

        def bias(self, n):
            if n not in self._cache:
                pos = torch.arange(n)
                self._cache[n] = self.table[pos[None, :] - pos[:, None] + 15]
            return self._cache[n]

        def forward(self, x):
            {forward}


    model = nn.Sequential(*[Block(8) for _ in range(2)])
    opt = torch.optim.Adam(model.parameters())
    for step in range(4):
        loss = model(torch.randn(8, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_memo_inside_blocks_stacked_from_an_unpacked_list_is_found() -> None:
    # A relative-position bias memoised per length, in blocks stacked by `Sequential(*[...])`.
    found = _found(_BLOCKS.format(forward="return self.fc(x) + self.bias(x.size(0))"))
    assert found == [(26, "GG003")]  # at the backward


def test_the_same_blocks_without_the_memo_are_clean() -> None:
    assert _found(_BLOCKS.format(forward="return self.fc(x)")) == []
