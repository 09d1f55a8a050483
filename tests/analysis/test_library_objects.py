"""Objects of library classes whose methods have facts of their own (`Class.method`): a replay buffer
sampled through its own `random.Random(seed)` or numpy `default_rng(seed)` picks stored items, as
`random.sample` does."""

from __future__ import annotations

import textwrap

import pytest

from gradguard.analysis import analyze, api
from gradguard.analysis.api import Returns


def _found(code: str) -> list[tuple[int, str]]:
    source = "import random\nimport numpy as np\nimport torch\nimport torch.nn as nn\n" + textwrap.dedent(code)
    return [(d.span.start.row, d.code) for d in analyze(source)]


def test_generator_classes_make_objects_whose_methods_are_facts() -> None:
    assert api.makes("random.Random") is Returns.OBJECT
    assert api.lookup("numpy.random.default_rng").instance == "numpy.random.Generator"
    assert api.lookup("random.Random.sample").picks
    assert api.lookup("numpy.random.Generator.choice").draws


_BUFFER = """
    class ReplayBuffer:
        def __init__(self):
            self.memory = []
            self.rng = {rng}

        def push(self, state, action):
            self.memory.append((state, action))

        def sample(self, n):
            batch = {pick}
            states, actions = zip(*batch)
            return torch.stack(states), torch.tensor(actions)


    encoder = nn.Linear(4, 4)
    head = nn.Linear(4, 2)
    opt = torch.optim.Adam(head.parameters())
    buffer = ReplayBuffer()
    for step in range(50):
        z = {encode}
        buffer.push(z, 1)
        if len(buffer.memory) > 10:
            s, a = buffer.sample(4)
            loss = head(s).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
"""

_SOURCES = {
    "random.Random": ("random.Random(0)", "self.rng.sample(self.memory, n)"),
    "numpy default_rng": ("np.random.default_rng(0)",
                          "[self.memory[i] for i in self.rng.choice(len(self.memory), n)]"),
}


@pytest.mark.parametrize("source", list(_SOURCES))
def test_features_with_a_graph_sampled_by_the_buffers_own_generator_are_found(source: str) -> None:
    rng, pick = _SOURCES[source]
    found = _found(_BUFFER.format(rng=rng, pick=pick, encode="encoder(torch.randn(4))"))
    assert [code for _, code in found] == ["GG003"]


@pytest.mark.parametrize("source", list(_SOURCES))
def test_features_encoded_without_grad_are_clean(source: str) -> None:
    rng, pick = _SOURCES[source]
    assert _found(_BUFFER.format(rng=rng, pick=pick, encode="encoder(torch.randn(4)).detach()")) == []
