"""`apply` of a custom autograd.Function: its forward and backward run graph-free, and the result is one
node over the graphs of its arguments (a surrogate spike, a straight-through estimator)."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze

_SPIKE = """
import torch
import torch.nn as nn


class Spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x > 0).float()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1 + 10 * x.abs()) ** 2
"""


def _found(code: str) -> list[tuple[int, str]]:
    return [(d.span.start.row, d.code) for d in analyze(_SPIKE + textwrap.dedent(code))]


def test_the_result_of_apply_carries_the_graph_of_its_argument() -> None:
    found = _found("""
        fc = nn.Linear(4, 4)
        out = fc(torch.randn(2, 4))
        spikes = Spike.apply(out)
        spikes.sum().backward()
        out.sum().backward()
    """)
    assert [code for _, code in found] == ["GG002"]


_LIF = """
    class LIFCell(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x, state):
            v, i = state
            i = 0.8 * i + self.fc(x)
            v = 0.9 * v + 0.1 * i
            z = Spike.apply(v - 0.5)
            return z, (v * (1 - z), i)


    cell = LIFCell()
    opt = torch.optim.Adam(cell.parameters())
    state = (torch.zeros(4, 8), torch.zeros(4, 8))
    for chunk in range(10):
        for k in range(5):
            z, state = cell(torch.randn(4, 8), state)
        loss = z.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        v, i = state
        state = {carried}
"""


def test_a_spiking_state_truncated_in_one_part_only_is_found() -> None:
    # The membrane is detached after each chunk, the synaptic current is not (norse-style LIF state).
    assert [code for _, code in _found(_LIF.format(carried="(v.detach(), i)"))] == ["GG003"]


def test_a_spiking_state_truncated_in_every_part_is_clean() -> None:
    assert _found(_LIF.format(carried="(v.detach(), i.detach())")) == []
