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


def test_a_list_of_models_handed_to_a_function_is_unpacked_into_those_models() -> None:
    # `train(epoch, [net_g, net_d, net_dur], ...)` then `net_g, net_d, net_dur = nets` (VITS-style TTS):
    # the generator's forward is read, so its mask (no graph) is no shared graph of two losses.
    found = _found("""
        class Gen(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x, lengths):
                mask = (torch.arange(4)[None, :] < lengths[:, None]).float()
                return self.fc(x) * mask, mask


        def train(nets, optims, loader):
            net_g, net_d = nets
            optim_g, optim_d = optims
            for x, lengths in loader:
                y, mask = net_g(x, lengths)
                loss_d = net_d(y).mean() + mask.sum()
                optim_d.zero_grad()
                loss_d.backward()
                optim_d.step()
                loss_m = (mask * 2).sum()
                optim_g.zero_grad()
                loss_m.backward()
                optim_g.step()


        net_g, net_d = Gen(), nn.Linear(4, 1)
        loader = [(torch.randn(2, 4), torch.tensor([4, 2])) for _ in range(3)]
        train([net_g, net_d], [torch.optim.Adam(net_g.parameters()), torch.optim.Adam(net_d.parameters())], loader)
    """)
    assert found == []
