"""Objects kept between calls in a cache of the program's own: a per-network dict, a global, weak
references. A reset helper that walks `net.modules()` once and then resets what its cache gives back
(spikingjelly's `functional.reset_net`) resets the same layers on every call; the model follows the
cached path to those layers, so the state they keep is reset there, and a cached path that resets
nothing is still the bug it is.

Model pieces: `dict.get` of a key a dict may not hold gives the default (None unless one is
passed), and an empty dict gives only the default; `x is None` is decided by what `x` holds (None
itself, or a container or object nothing set to None); None joined with an object keeps what is
known of the object; objects appended to a list of known objects stay known; `weakref.ref(m)()` is
`m`. The joins and objects are unit-tested on values below.
"""

from __future__ import annotations

import textwrap

import pytest

from gradguard.analysis import analyze
from gradguard.analysis.values import NONE, Kind, Value, an_object, join

_LAYERS = """
import weakref

import torch
from torch import nn


class IF(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = 0.0

    def forward(self, dv):
        self.v = self.v + dv
        return torch.sigmoid(self.v)

    def reset(self):
        self.v = 0.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.node1 = nn.Linear(4, 4), IF()
        self.fc2, self.node2 = nn.Linear(4, 2), IF()

    def forward(self, x):
        return self.node2(self.fc2(self.node1(self.fc1(x))))

"""

_LOOP = """

def train(net, steps):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(steps):
        opt.zero_grad()
        out = net(torch.randn(8, 4))
        loss = out.pow(2).mean()
        loss.backward()
        opt.step()
        reset_net(net)


train(Net(), 5)
"""

RESETS = {
    "dict-get": """
_CACHE = {}


def reset_net(net):
    cached = _CACHE.get(net)
    if cached is not None:
        modules = cached
    else:
        modules = [m for m in net.modules() if callable(getattr(m, "reset", None))]
        _CACHE[net] = modules
    for m in modules:
        m.reset()
""",
    "global": """
_MODULES = None


def reset_net(net):
    global _MODULES
    if _MODULES is None:
        _MODULES = [m for m in net.modules() if hasattr(m, "reset")]
    for m in _MODULES:
        m.reset()
""",
    "weak-references": """
_CACHE = weakref.WeakKeyDictionary()


def reset_net(net):
    cached = _CACHE.get(net)
    if cached is not None:
        modules = []
        for weak in cached:
            module = weak()
            if module is None:
                _CACHE.pop(net, None)
                return reset_net(net)
            modules.append(module)
    else:
        modules = [m for m in net.modules() if callable(getattr(m, "reset", None))]
        _CACHE[net] = tuple(weakref.ref(m) for m in modules)
    for m in modules:
        m.reset()
""",
    "bound-methods": """
_CACHE = {}


def reset_net(net):
    resets = _CACHE.get(net, None)
    if resets is None:
        resets = [m.reset for m in net.modules() if isinstance(m, IF)]
        _CACHE[net] = resets
    for reset in resets:
        reset()
""",
    # The tests of None decided by a list that is there (both ways round), and by None itself.
    "not-none": """
_MODULES = [None]


def reset_net(net):
    if _MODULES[0] is None:
        _MODULES[0] = [m for m in net.modules() if isinstance(m, IF)]
    modules = [m for m in net.modules() if isinstance(m, IF)]
    if modules is not None:
        for m in modules:
            m.reset()
""",
    "is-none-else": """
def reset_net(net):
    modules = [m for m in net.modules() if isinstance(m, IF)]
    previous = None
    if modules is None:
        return
    else:
        for m in modules:
            m.reset()
    if previous is not None:
        return
    if not previous is None:
        return
    for m in modules:
        m.reset()
""",
}

# The cached path resets nothing: from the second step on, each layer's state keeps the graph the
# previous backward freed.
FORGETFUL = """
_SEEN = {}


def reset_net(net):
    if _SEEN.get(net) is not None:
        return
    _SEEN[net] = [m for m in net.modules() if hasattr(m, "reset")]
    for m in _SEEN[net]:
        m.reset()
"""


def _program(reset: str) -> str:
    return textwrap.dedent(_LAYERS) + textwrap.dedent(reset) + textwrap.dedent(_LOOP)


@pytest.mark.parametrize("shape", sorted(RESETS))
def test_layers_reset_through_a_cache_keep_no_stale_graph(shape: str) -> None:
    assert [(d.code, d.span.start.row) for d in analyze(_program(RESETS[shape]))] == []


def test_a_cached_path_that_resets_nothing_is_still_found() -> None:
    codes = {d.code for d in analyze(_program(FORGETFUL))}
    assert "GG003" in codes


def test_programs_run_as_the_model_says() -> None:
    torch = pytest.importorskip("torch")
    assert torch is not None
    for reset in RESETS.values():
        exec(compile(_program(reset), "<reset>", "exec"), {"__name__": "__main__"})
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(_program(FORGETFUL), "<forgetful>", "exec"), {"__name__": "__main__"})


def test_none_joined_with_an_object_keeps_what_is_known_of_it() -> None:
    layers = Value(Kind.LIST, elems=(Value(Kind.MODULE), Value(Kind.MODULE)))
    joined = join(NONE, layers)
    assert joined.kind is Kind.LIST and joined.maybe_none and joined.elems == layers.elems
    assert join(layers, NONE).elems == layers.elems


def test_a_callable_bound_to_an_object_counts_as_that_object() -> None:
    module = Value(Kind.MODULE)
    assert an_object(Value(Kind.FUNCTION, bound=module))
    assert not an_object(Value(Kind.FUNCTION))


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("loss.backward()", True),
        ("accelerator.backward(loss)", True),
        ("optim_wrapper.update_params(loss)", True),
        ("optim_wrapper.update_params(total_loss * 0.5)", True),
        # higher's patched module installs fast weights: no loss is handed over.
        ("f_net.update_params(params=[w - lr * g for w, g in zip(ws, gs)])", False),
        ("f_net.update_params([w - lr * g for w, g in zip(ws, gs)])", False),
        ("f_net.update_params()", False),
        ("self.manual_backward(loss)", True),
        ("self.manual_backward(*losses)", False),
    ],
)
def test_a_backward_method_that_starts_from_its_argument_needs_a_loss_handed_over(call: str, expected: bool) -> None:
    import libcst as cst

    from gradguard.analysis.calls import _may_hand_a_loss

    parsed = cst.parse_expression(call)
    assert isinstance(parsed, cst.Call) and isinstance(parsed.func, cst.Attribute)
    assert _may_hand_a_loss(parsed.func.attr.value, parsed) is expected


DEAD_BRANCH = """
import torch
import torch.nn as nn

net = nn.Linear(2, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
cache = []


def solve(x, steps, interpolator=None, t_eval=None):
    out = [x]
    for _ in range(steps):
        x = x + 0.1 * net(x)
        if t_eval is not None and interpolator is not None:
            out.append(interpolator.evaluate(x, cache))
        elif not (interpolator is None or t_eval is None):
            out.append(interpolator.evaluate(out[0], cache))
        out.append(x)
    return torch.stack(out)


x0 = torch.zeros(1, 2, requires_grad=True) + 0.5
for step in range(3):
    loss = solve(x0, 4).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_branch_that_needs_an_argument_nobody_passed_is_not_taken() -> None:
    """`if t_eval is not None and interpolator is not None:` in a solver called without either:
    None tests are decided through `and`, `or` and `not` by the values (torchdyn, r43/r44)."""
    assert [d.code for d in analyze(DEAD_BRANCH)] == []
    taken = DEAD_BRANCH.replace("solve(x0, 4)", "solve(x0, 4, interpolator=Interp(), t_eval=[1.0])").replace(
        "cache = []", "cache = []\n\n\nclass Interp:\n    def evaluate(self, x, kept):\n        kept.append(x)\n"
        "        return kept[0]")
    # Taken, the branch reuses the first step's state, whose graph the first backward freed.
    assert {d.code for d in analyze(taken)} & {"GG003", "GG006"}
    pytest.importorskip("torch")
    exec(compile(DEAD_BRANCH, "<dead>", "exec"), {"__name__": "__main__"})
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(taken, "<taken>", "exec"), {"__name__": "__main__"})


def test_a_type_test_of_an_optional_argument_left_none_is_not_taken() -> None:
    """torchdyn's `odeint`: `if type(interpolator) == str: interpolator = str_to_interp(...)` with no
    interpolator given leaves it None, so the solver's dense-output branch never runs."""
    dispatching = DEAD_BRANCH.replace(
        "def solve(x, steps, interpolator=None, t_eval=None):\n    out = [x]\n",
        "def solve(x, steps, interpolator=None, t_eval=None):\n    if type(interpolator) == str:\n"
        "        interpolator = Interp()\n        t_eval = [1.0]\n    out = [x]\n").replace(
        "cache = []", "cache = []\n\n\nclass Interp:\n    def evaluate(self, x, kept):\n        kept.append(x)\n"
        "        return kept[0]")
    assert [d.code for d in analyze(dispatching)] == []
    chosen = dispatching.replace("solve(x0, 4)", 'solve(x0, 4, interpolator="cubic")')
    assert {d.code for d in analyze(chosen)} & {"GG003", "GG006"}
    pytest.importorskip("torch")
    exec(compile(dispatching, "<dispatching>", "exec"), {"__name__": "__main__"})
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(chosen, "<chosen>", "exec"), {"__name__": "__main__"})
