"""A tensor a layer kept for its backward, returned by the model and written in place under the caller's
name (`value, hx = agent(obs, hx)` then `hx[done] = 0.0`): the write changes what the graph saved,
whatever name it was saved under (the model keys saved tensors by the evaluation that made them too)."""

from __future__ import annotations

import textwrap

from fixture_support import run_source_many

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round


def _found(code: str) -> list[tuple[int, str]]:
    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(code)
    return [(d.span.start.row, d.code) for d in analyze(source)]


_AGENT = """
    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRUCell(4, 4)
            self.head = nn.Linear(4, 1)

        def forward(self, x, hx):
            hx = self.gru(x, hx)
            return self.head(hx), hx


    def train(agent, optimizer, updates):
        hx = torch.zeros(3, 4)
        for update in range(updates):
            values = []
            hx = hx.detach()
            for t in range(4):
                value, hx = agent(torch.randn(3, 4), hx)
                done = torch.rand(3) < 0.3
                {reset}
                values.append(value)
            loss = torch.stack(values).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    agent = Agent()
    train(agent, torch.optim.Adam(agent.parameters()), 5)
"""


def test_a_returned_state_masked_in_place_is_found() -> None:
    assert [code for _, code in _found(_AGENT.format(reset="hx[done] = 0.0"))] == ["GG011"]


def test_a_returned_state_masked_out_of_place_is_clean() -> None:
    assert _found(_AGENT.format(reset="hx = hx * (~done).float().unsqueeze(-1)")) == []


def test_the_fix_for_the_programs_own_write_writes_into_a_clone_and_trains_like_the_out_of_place_form() -> None:
    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(_AGENT.format(reset="hx[done] = 0.0"))
    (finding,) = analyze(source)
    assert "the in-place write at line 23 has since changed `hx`" in finding.message
    assert finding.fix is not None
    fixed, _ = fix_text_round(source, choose_fixes((finding,), unsafe=True))
    assert fixed.index("hx = hx.clone()") < fixed.index("hx[done] = 0.0")
    assert analyze(fixed) == ()
    hand = source.replace("hx[done] = 0.0", "hx = hx * (~done).float().unsqueeze(-1)")
    tail = "\ntorch.manual_seed(0)\nprint(sum(p.sum().item() for p in agent.parameters()))\n"
    runs = run_source_many({"fixed.py": fixed.replace("\nagent = Agent()", "\ntorch.manual_seed(0)\nagent = Agent()")
                            + tail,
                            "hand.py": hand.replace("\nagent = Agent()", "\ntorch.manual_seed(0)\nagent = Agent()")
                            + tail})
    assert runs["fixed.py"].error_type is None, runs["fixed.py"].stderr
    assert runs["fixed.py"].stdout == runs["hand.py"].stdout
