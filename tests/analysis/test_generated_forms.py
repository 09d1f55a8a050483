"""Facts generated from torch hold for the form of the call they were probed with: `torch.where` given
one tensor returns indices (no graph), given three it selects between two tensors (a graph); the
function form `torch.detach(x)` cuts the graph like `x.detach()`."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze, api


def _found(code: str) -> list[tuple[int, str]]:
    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(code)
    return [(d.span.start.row, d.code) for d in analyze(source)]


def test_the_generated_facts_know_the_arity_they_were_probed_with() -> None:
    assert api.probed_arity("torch.where") == 1
    assert api.probed_arity("torch.lerp") == 3
    assert api.probed_arity("not.an.op") is None


def test_a_three_argument_where_keeps_the_graph_of_the_tensors_it_selects_from() -> None:
    # A masked target built once before the loop from a network's output: backward-ed every step.
    found = _found("""
        net = nn.Linear(4, 4)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(8, 4)
        target = torch.where(x > 0, net(x), torch.zeros(8, 4))
        for step in range(3):
            loss = (target - x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)
    assert [code for _, code in found] == ["GG006"]


def test_a_one_argument_where_gives_indices_without_a_graph() -> None:
    found = _found("""
        net = nn.Linear(4, 4)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(8, 4)
        rows = torch.where(net(x).sum(1) > 0)
        for step in range(3):
            loss = net(x[rows]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)
    assert found == []


def test_the_function_form_of_detach_cuts_the_graph_like_the_method() -> None:
    # A duration predictor fed the text encoder's detached output (VITS-style TTS), trained by its
    # own discriminator: the generator's backward does not go through the discriminator's graph.
    found = _found("""
        enc = nn.Linear(4, 4)
        predictor = nn.Linear(4, 1)
        disc = nn.Linear(1, 1)
        opt_g = torch.optim.Adam([*enc.parameters(), *predictor.parameters()])
        opt_d = torch.optim.Adam(disc.parameters())
        for step in range(3):
            hidden = enc(torch.randn(2, 4))
            log_durations = predictor(torch.detach(hidden))
            loss_d = disc(log_durations).sum()
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
            loss_g = hidden.pow(2).sum()
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
    """)
    assert found == []


def test_the_generated_module_facts_name_each_layers_own_parameters() -> None:
    assert api.lookup("torch.nn.Linear").parameters == ("weight", "bias")
    assert api.lookup("torch.nn.Embedding").parameters == ("weight",)
    assert api.lookup("torch.nn.ReLU").parameters == ()


_TABLE = """
    class TwoTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.user_emb = nn.Embedding(30, 16)
            self.item_emb = nn.Embedding(40, 16)

        def users(self, ids):
            return torch.nn.functional.normalize(self.user_emb(ids), dim=-1)

        def item_table(self):
            return torch.nn.functional.normalize(self.item_emb.weight, dim=-1)


    model = TwoTower()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    {before}
    for step in range(5):
        ids = torch.randint(30, (8,))
        {inside}
        loss = torch.nn.functional.cross_entropy(model.users(ids) @ items.t(), torch.randint(40, (8,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_layers_weight_read_as_an_attribute_is_a_parameter() -> None:
    # The item table normalised once before the loop from `item_emb.weight` (a retrieval model).
    found = _found(_TABLE.format(before="items = model.item_table()", inside="pass"))
    assert [code for _, code in found] == ["GG006"]


def test_the_same_table_normalised_at_each_step_is_clean() -> None:
    assert _found(_TABLE.format(before="pass", inside="items = model.item_table()")) == []
