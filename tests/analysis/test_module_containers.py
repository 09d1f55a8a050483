"""Modules reached through a model's containers and children (`named_children()`, a ModuleDict's
`items()`), and dicts of tensors that a loop reads but does not carry: the model follows the modules
and tells a value computed once per epoch from a state the loop carries."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round

PRUNING = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class MaskedLinear(nn.Linear):
        def __init__(self, n_in, n_out):
            super().__init__(n_in, n_out)
            self.mask_logits = nn.Parameter(torch.zeros(n_out, n_in))

        def soft_mask(self, temperature):
            return torch.sigmoid(self.mask_logits / temperature)

        def forward(self, x, mask):
            return F.linear(x, self.weight * mask, self.bias)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = MaskedLinear(8, 16), MaskedLinear(16, 2)

        def soft_masks(self, temperature):
            return {name: m.soft_mask(temperature) for name, m in self.named_children() if isinstance(m, MaskedLinear)}

        def forward(self, x, masks):
            return self.fc2(torch.relu(self.fc1(x, masks["fc1"])), masks["fc2"])


    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(3):
        masks = model.soft_masks(1.0)
        for x, y in [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(5)]:
            loss = F.cross_entropy(model(x, masks), y) + 1e-3 * sum(m.mean() for m in masks.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)

HEADS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = nn.ModuleDict({"a": nn.GRUCell(3, 8), "b": nn.GRUCell(2, 8)})
            self.head = nn.Linear(16, 1)

        def step(self, inputs, states):
            new = {name: cell(inputs[name], states[name]) for name, cell in self.cells.items()}
            return self.head(torch.cat([new["a"], new["b"]], -1)), new


    model = Fusion()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    states = {"a": torch.zeros(4, 8), "b": torch.zeros(4, 8)}
    for window in range(10):
        loss = 0.0
        for t in range(5):
            pred, states = model.step({"a": torch.randn(4, 3), "b": torch.randn(4, 2)}, states)
            loss = loss + pred.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    """)


def _rows(source: str) -> list[tuple[str, str]]:
    lines = source.splitlines()
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source)]


def test_masks_computed_once_per_epoch_from_named_children_are_built_before_the_batch_loop() -> None:
    assert _rows(PRUNING) == [("GG006", "loss.backward()")]
    fixed, _ = fix_text_round(PRUNING, choose_fixes(analyze(PRUNING), unsafe=True))
    assert "    for x, y in" in fixed and fixed.index("for x, y in") < fixed.index("masks = model.soft_masks(1.0)")
    assert _rows(fixed) == []


def test_a_dict_of_states_from_the_cells_of_a_module_dict_is_carried_state() -> None:
    found = analyze(HEADS)
    assert _rows(HEADS) == [("GG003", "loss.backward()")]
    assert found[0].message.startswith("`states`")


SPIKING = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class LIF(nn.Module):
        def __init__(self, tau=2.0):
            super().__init__()
            self.tau = tau
            self.v = 0.0

        def forward(self, x):
            self.v = self.v + (x - self.v) / self.tau
            return torch.sigmoid(self.v - 0.5)

        def reset(self):
            self.v = 0.0


    class Dropout(nn.Module):
        def __init__(self, p):
            super().__init__()
            self.p = p

        def forward(self, x):
            return x

        def reset(self):
            pass


    def resettable(net):
        return tuple(m for m in net.modules() if hasattr(m, "reset"))


    def reset_net(net):
        for m in resettable(net):
            m.reset()


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.lif1 = nn.Sequential(LIF(), Dropout(0.2))
            self.fc2 = nn.Linear(16, 16)
            self.lif2 = nn.Sequential(LIF(), Dropout(0.2))
            self.fc3 = nn.Linear(16, 16)
            self.lif3 = nn.Sequential(LIF(), Dropout(0.2))
            self.fc4 = nn.Linear(16, 16)
            self.lif4 = nn.Sequential(LIF(), Dropout(0.2))
            self.fc5 = nn.Linear(16, 2)
            self.out = LIF()
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)

        def forward(self, x):
            x = self.lif2(self.fc2(self.lif1(self.fc1(x))))
            x = self.lif4(self.fc4(self.lif3(self.fc3(x))))
            return self.out(self.fc5(x))


    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(5):
        x, y = torch.rand(4, 8), torch.randint(0, 2, (4,))
        for t in range(3):
            out = net(x)
        loss = nn.functional.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reset_net(net)
    """)


def test_a_reset_over_a_filtered_list_of_many_modules_reaches_each_layer_in_a_sequential() -> None:
    # Twenty modules, the stateful ones inside `nn.Sequential`s, reset through a tuple built by a
    # generator expression: each layer's state is reset, so nothing is carried.
    assert not analyze(SPIKING)
    unreset = SPIKING.replace("    reset_net(net)\n", "")
    assert [(code, text) for code, text in _rows(unreset)] == [("GG003", "loss.backward()")]
