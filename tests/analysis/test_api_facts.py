"""The API facts against torch itself: the generated table is current, every name exists, and each
kind of fact (saves tensors, view, cut, in-place history, factories, grad mode, caches, callbacks)
is what torch really does. The lint path reads the facts without importing torch."""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gradguard.analysis import api, knowledge
from gradguard.analysis.api import torch_ops
from gradguard.analysis.api.facts import Fact, Receiver, Returns, When

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning"), pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_torch_facts", ROOT / "tools" / "generate_torch_facts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
OPS: dict[str, dict[str, Any]] = torch_ops.table()["ops"]


def resolve(dotted: str) -> Any:
    """The object a qualified name names: the longest importable module prefix, then attributes."""
    if "." not in dotted:
        return getattr(builtins, dotted)
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def call(qualified: str, label: str) -> tuple[Any, list[Any]]:
    """Run a generated op on fresh arguments built from its signature label."""
    GEN._seed()
    args, tracked = GEN.arguments(label)
    if qualified.startswith(torch_ops.TENSOR_PREFIX):
        return getattr(args[0], qualified.removeprefix(torch_ops.TENSOR_PREFIX))(*args[1:]), tracked
    return resolve(qualified)(*args), tracked


def tensors(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in tensors(item)]
    return []


def second_backward_raises(outputs: list[Any]) -> bool:
    total = sum(t.real.sum() if t.is_complex() else t.sum() for t in outputs if t.grad_fn is not None)
    total.backward()
    try:
        total.backward()
    except RuntimeError as exc:
        assert "second time" in str(exc) or "freed" in str(exc), exc
        return True
    return False


def reaches(node: Any, target: Any) -> bool:
    todo, seen = [node], set()
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        if current is target:
            return True
        seen.add(id(current))
        todo.extend(n for n, _ in current.next_functions)
    return False


def generated(pick: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    return ((name, entry) for name, entry in OPS.items() if pick(entry))


# -- the table is torch's own answer, and current ------------------------------------------------------

MODULES: dict[str, dict[str, Any]] = torch_ops.table()["modules"]


def test_regenerating_the_table_gives_the_shipped_text() -> None:
    """The whole table, generated again from the installed torch, is the shipped file byte for byte
    (what `python tools/generate_torch_facts.py --check` checks)."""
    text = (ROOT / "gradguard" / "analysis" / "api" / "torch_ops.json").read_text(encoding="utf-8")
    assert json.loads(text)["torch"] == torch.__version__.split("+")[0]
    assert GEN.dump(GEN.generate()) == text


def test_the_table_covers_every_op_tried_and_counts_the_rest() -> None:
    tried = GEN.names()
    assert len(tried) == len(set(tried))
    assert set(OPS) | set(MODULES) <= set(tried)
    assert len(OPS) + len(MODULES) + sum(torch_ops.table()["skipped"].values()) == len(tried)
    assert len(OPS) > 1200 and len(MODULES) > 150


def test_parameterless_modules_have_no_parameters_and_hand_facts_agree() -> None:
    parameterless = {f.name for f in torch_ops.generated_facts() if f.parameterless}
    assert len(parameterless) > 100
    for name in parameterless:
        init = MODULES[name]["init"]
        module = resolve(name)(*(int(a) for a in init.split(";") if a))
        assert not list(module.parameters()), name
    hand = {f.name for f in api.hand_facts() if f.parameterless}
    assert hand - parameterless <= {"torch.nn.Identity"}  # Identity(*args) could hold anything; it does not
    assert not parameterless & {"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.DataParallel"}


@pytest.mark.parametrize("name", sorted(n for n, e in MODULES.items() if "keeps-weights" in e))
def test_keeps_weights_means_a_step_on_data_breaks_the_backward(name: str) -> None:
    """`keeps-weights`: called on inputs without a graph, the module's graph still keeps its parameters,
    so an in-place update of them (an optimizer's step) breaks its backward; False: it does not."""
    cls = resolve(name)
    init = MODULES[name]["init"]
    module = cls(**GEN.MODULE_INIT_OVERRIDES[cls.__name__]) if init == "small" else cls(
        *(int(a) for a in init.split(";") if a))
    args, _ = GEN.arguments(MODULES[name]["args"])
    data = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    outputs = [t for t in tensors(module(*data)) if t.grad_fn is not None]
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.mul_(1.0)
    try:
        sum(t.real.sum() if t.is_complex() else t.sum() for t in outputs).backward()
        raised = False
    except RuntimeError as exc:
        assert "inplace" in str(exc), exc
        raised = True
    assert raised is MODULES[name]["keeps-weights"]


def test_the_shipped_text_is_the_deterministic_dump() -> None:
    text = (ROOT / "gradguard" / "analysis" / "api" / "torch_ops.json").read_text(encoding="utf-8")
    assert GEN.dump(json.loads(text)) == text


# -- every name exists ------------------------------------------------------------------------------

# The class whose methods the facts of a library module speak of, by receiver.
RECEIVER_CLASSES = {
    ("torch_tensor", Receiver.TENSOR): "torch.Tensor",
    # A module method, or a method of the module containers (`ModuleDict.items`).
    ("nn", Receiver.MODULE): ("torch.nn.Module", "torch.nn.ModuleDict"),
    ("hooks", Receiver.MODULE): "torch.nn.Module",
    ("optim", Receiver.OPTIMIZER): "torch.optim.Optimizer",
    ("distributions", Receiver.DISTRIBUTION): "torch.distributions.Distribution",
    ("amp", Receiver.SCALER): "torch.amp.GradScaler",
    ("lightning", Receiver.LIGHTNING): "lightning.pytorch.LightningModule",
    ("lightning", Receiver.ACCELERATOR): "lightning.fabric.Fabric",
    ("accelerate", Receiver.ACCELERATOR): "accelerate.Accelerator",
    ("deepspeed", Receiver.ENGINE): "deepspeed.DeepSpeedEngine",
    ("mmengine", Receiver.OPTIMIZER): "mmengine.optim.OptimWrapper",
    # A container method is a method of one of Python's containers.
    ("std_builtins", Receiver.CONTAINER): ("builtins.list", "builtins.dict", "builtins.set", "collections.deque"),
}
OPTIONAL = ("transformers", "accelerate", "deepspeed", "mmcv", "mmengine")


def _installed(dotted: str) -> bool:
    return dotted.split(".")[0] not in OPTIONAL or importlib.util.find_spec(dotted.split(".")[0]) is not None


def _has(target: str, attr: str | None) -> bool:
    try:
        owner = resolve(target)
        if attr is not None:
            getattr(owner, attr)
    except (ImportError, AttributeError):
        return False
    return True


def test_every_name_in_any_fact_exists() -> None:
    missing = []
    for library in api.libraries():
        short = library.__name__.rsplit(".", 1)[-1]
        for fact in library.FACTS:
            if fact.receiver is None:
                targets, attr = (fact.name,), None
            else:
                classes = RECEIVER_CLASSES[(short, fact.receiver)]
                targets, attr = (classes,) if isinstance(classes, str) else classes, fact.name
            if not all(_installed(t) for t in targets):
                continue
            if not any(_has(t, attr) for t in targets):
                missing.append(f"{short}: {fact.name} ({fact.receiver})")
    for fact in torch_ops.generated_facts():
        owner = torch.Tensor if fact.receiver is Receiver.TENSOR else None
        if (owner is not None and not hasattr(owner, fact.name)) or (owner is None and resolve(fact.name) is None):
            missing.append(fact.name)
    assert missing == []


def test_every_knowledge_name_is_known_to_torch_or_python() -> None:
    """The compatibility names hold no invented entries (`type_as_bool`, `torch.where_cond`)."""
    for name in ("CUT_METHODS", "INPLACE_CUT_METHODS", "INPLACE_OPS", "FRESH_METHODS", "NON_SAVING_METHODS"):
        assert {m for m in getattr(knowledge, name) if not hasattr(torch.Tensor, m)} == set(), name
    assert {m for m in knowledge.MODULE_RETURNS_SELF if not hasattr(torch.nn.Module, m)} == set()
    for name in ("CUT_FUNCTIONS", "FACTORIES", "NON_SAVING_FUNCTIONS", "NO_GRAD", "ENABLE_GRAD",
                 "SET_GRAD_ENABLED", "PARAMETERLESS_MODULES", "MODULE_WRAPPERS", "DATA_FUNCTIONS"):
        for qualified in getattr(knowledge, name):
            if _installed(qualified):
                assert resolve(qualified) is not None, (name, qualified)


def test_where_backward_and_grad_take_their_arguments_is_torch_s_signature() -> None:
    """The (position, keyword) facts the analysis and the monitor read `retain_graph=` and the roots by."""
    import inspect

    from gradguard.analysis.api import torch_functions as F
    from gradguard.analysis.api import torch_tensor as T

    checked = {
        F.BACKWARD_FUNCTION: (F.BACKWARD_ROOTS, F.BACKWARD_RETAIN, F.BACKWARD_CREATE),
        F.GRAD_FUNCTION: (F.GRAD_OUTPUTS, F.GRAD_INPUTS, F.GRAD_RETAIN, F.GRAD_CREATE),
        "torch.Tensor.backward": (T.BACKWARD_RETAIN, T.BACKWARD_CREATE),
    }
    for name, placed in checked.items():
        parameters = list(inspect.signature(resolve(name)).parameters)
        if name.startswith(torch_ops.TENSOR_PREFIX):
            parameters = parameters[1:]  # self
        for position, keyword in placed:
            assert parameters[position] == keyword, (name, position, keyword)
    assert T.RETAIN_GRAPH in T.RETAIN_KEYWORDS and T.CREATE_GRAPH in T.GRAPH_KEYWORDS


# -- each generated category against torch itself ----------------------------------------------------


@pytest.mark.parametrize("expected", [True, False], ids=["saves", "saves-nothing"])
def test_saves_tensors_means_a_second_backward_raises(expected: bool) -> None:
    wrong = []
    for name, entry in generated(lambda e: e.get("saves") is expected):
        result, _ = call(name, entry["args"])
        if second_backward_raises(tensors(result)) is not expected:
            wrong.append(name)
    assert wrong == []


def test_a_view_shares_its_input_storage() -> None:
    wrong = []
    for name, entry in generated(lambda e: e.get("view")):
        result, tracked = call(name, entry["args"])
        if not any(o._base is not None and any(o._base is t for t in tracked) for o in tensors(result)):
            wrong.append(name)
    assert wrong == []
    assert "torch.Tensor.view" in OPS and OPS["torch.Tensor.view"].get("view")
    assert not OPS["torch.Tensor.clone"].get("view")


def test_a_cut_result_has_no_grad_fn() -> None:
    cuts = [f for f in torch_ops.generated_facts() if f.returns is Returns.CUT]
    assert len(cuts) > 50
    for fact in cuts:
        qualified = torch_ops.TENSOR_PREFIX + fact.name if fact.receiver else fact.name
        result, _ = call(qualified, OPS[qualified]["args"])
        assert all(t.grad_fn is None and not t.requires_grad for t in tensors(result)), qualified


def test_in_place_ops_keep_or_drop_the_receivers_history_as_stated() -> None:
    checked = 0
    for name, entry in generated(lambda e: e.get("inplace") and entry_receiver_first(e)):
        GEN._seed()
        args, tracked = GEN.arguments(entry["args"])
        old = tracked[0].grad_fn
        method = name.removeprefix(torch_ops.TENSOR_PREFIX)
        if name.startswith(torch_ops.TENSOR_PREFIX):
            getattr(args[0], method)(*args[1:])
        else:
            resolve(name)(*args)
        now = tracked[0].grad_fn
        assert (now is not None and (now is old or reaches(now, old))) is entry["keeps"], name
        checked += 1
    assert checked > 150
    assert OPS["torch.Tensor.zero_"]["keeps"] and OPS["torch.Tensor.fill_"]["keeps"]
    assert not OPS["torch.Tensor.detach_"]["keeps"]


def entry_receiver_first(entry: dict[str, Any]) -> bool:
    return entry["args"].split(";")[0] in ("V", "M", "P", "S", "U", "C", "X3", "X4", "X5")


# -- hand facts against torch -------------------------------------------------------------------------


def _hand(pick: Any, receiver: Receiver | None = Receiver.TENSOR) -> list[Fact]:
    return [f for f in api.hand_facts() if f.receiver is receiver and pick(f)]


def test_hand_facts_agree_with_the_generated_ones() -> None:
    disagree = []
    for fact in api.hand_facts():
        qualified = torch_ops.TENSOR_PREFIX + fact.name if fact.receiver is Receiver.TENSOR else fact.name
        entry = OPS.get(qualified)
        if entry is None or (fact.receiver not in (None, Receiver.TENSOR)):
            continue
        mine = torch_ops.to_fact(qualified, entry)
        if fact.saves is not None and mine.saves is not None and fact.saves != mine.saves:
            disagree.append((qualified, "saves"))
        if fact.inplace and fact.keeps_history is not None and mine.keeps_history is not fact.keeps_history:
            disagree.append((qualified, "keeps history"))
        if fact.returns is Returns.CUT and entry["graph"]:
            disagree.append((qualified, "cut"))
        if fact.returns is Returns.VIEW and not entry.get("view"):
            disagree.append((qualified, "view"))
    assert disagree == []


def test_hand_cut_methods_leave_no_graph() -> None:
    for fact in _hand(lambda f: f.returns in (Returns.CUT, Returns.VALUE)):
        if fact.name == "numpy":
            with pytest.raises(RuntimeError, match="requires grad"):
                torch.ones(2, requires_grad=True).clone().numpy()
            continue
        if fact.calls is not None:  # register_hook: its handle
            result = getattr(torch.ones(2, requires_grad=True), fact.name)(lambda grad: None)
        else:
            label = OPS.get(torch_ops.TENSOR_PREFIX + fact.name, {}).get("args", "S" if fact.name.startswith("__") else "V")
            result, _ = call(torch_ops.TENSOR_PREFIX + fact.name, label)
        assert all(t.grad_fn is None for t in tensors(result)), fact.name
        if fact.returns is Returns.VALUE:
            assert not isinstance(result, torch.Tensor), fact.name


FACTORY_ARGS: dict[str, tuple[Any, ...]] = {
    "full": ((2,), 1.0), "full_like": (torch.ones(2), 1.0), "randint": (3, (2,)), "randperm": (3,), "arange": (3.0,), "linspace": (0.0, 1.0, 3),
    "logspace": (0.0, 1.0, 3), "eye": (2,), "tensor": ([1.0, 2.0],), "tril_indices": (3, 3),
    "triu_indices": (3, 3), "empty_strided": ((2,), (1,)), "scalar_tensor": (1.0,),
    "sparse_coo_tensor": ([[0]], [1.0], (2,)),
}


def test_factories_make_leaves_that_require_grad_when_asked() -> None:
    base = torch.ones(2)
    for fact in _hand(lambda f: f.returns is Returns.FRESH, receiver=None):
        short = fact.name.removeprefix("torch.")
        args = FACTORY_ARGS.get(short, (base,) if short.endswith("_like") else ((2,),))
        if fact.requires_grad_kwarg:
            if short in ("randint", "randperm", "tril_indices", "triu_indices", "randint_like"):
                continue  # integer results cannot require grad; the keyword exists but says no
            made = resolve(fact.name)(*args, requires_grad=True)
            assert made.is_leaf and made.requires_grad and made.grad_fn is None, fact.name
        plain = {"as_tensor": ([1.0],), "from_numpy": (base.numpy(),)}
        if short == "frombuffer":
            made = torch.frombuffer(bytearray(8), dtype=torch.float32)
        else:
            made = resolve(fact.name)(*plain.get(short, args))
        assert made.grad_fn is None and not made.requires_grad, fact.name
    receiver = torch.ones(2, requires_grad=True).clone()
    for fact in _hand(lambda f: f.returns is Returns.FRESH):
        made = getattr(receiver, fact.name)(*(((2,), 1.0) if fact.name == "new_full" else ([1.0],) if fact.name ==
                                              "new_tensor" else (2,)), requires_grad=True)
        assert made.is_leaf and made.requires_grad, fact.name


def test_torch_tensor_with_requires_grad_is_a_leaf_that_requires_grad() -> None:
    fact = api.lookup("torch.tensor")
    assert fact is not None and fact.returns is Returns.FRESH and fact.requires_grad_kwarg
    assert "torch.tensor" in knowledge.FACTORIES and "torch.tensor" not in knowledge.CUT_FUNCTIONS
    made = torch.tensor([1.0, 2.0], requires_grad=True)
    assert made.is_leaf and made.requires_grad


def test_hand_in_place_ops_keep_history_and_detach_cuts() -> None:
    for fact in _hand(lambda f: f.inplace):
        entry = OPS.get(torch_ops.TENSOR_PREFIX + fact.name)
        assert entry is not None, fact.name
        assert entry["keeps"] is fact.keeps_history, fact.name
    assert "zero_" in knowledge.INPLACE_OPS and "zero_" not in knowledge.INPLACE_CUT_METHODS
    assert "fill_" in knowledge.INPLACE_OPS and "detach_" in knowledge.INPLACE_CUT_METHODS


def test_builtin_sum_max_min_save_no_tensors() -> None:
    for name in ("sum", "max", "min"):
        fact = api.lookup(name)
        assert fact is not None and fact.saves is False
        leaves = [torch.ones(2, requires_grad=True).clone() for _ in range(3)]
        result = getattr(builtins, name)(leaves) if name == "sum" else getattr(builtins, name)(*[t.sum() for t in leaves])
        assert not second_backward_raises(tensors(result)), name
    assert "sum" in knowledge.NON_SAVING_FUNCTIONS or "torch.sum" in knowledge.NON_SAVING_FUNCTIONS


TWICE = """\
import torch

w = {make}
parts = [w * w, w * 3.0]
loss = ({combine}).sum()
loss.backward()
loss.backward()
"""


@pytest.mark.parametrize(("make", "combine", "raises"), [
    ("torch.tensor([1.0, 2.0], requires_grad=True)", "torch.stack(parts)", True),
    ("torch.ones(2, requires_grad=True)", "torch.stack(parts)", True),
    ("torch.tensor([1.0, 2.0], requires_grad=True)", "sum(parts)", True),
    ("torch.tensor([1.0, 2.0], requires_grad=True) + 0", "sum([w + 1.0, w - 2.0])", False),
    ("torch.tensor([1.0, 2.0], requires_grad=True)", "torch.stack([w + 1.0, w - 2.0])", False),
])
def test_the_analysis_and_torch_agree_on_factories_and_builtin_sum(make: str, combine: str, raises: bool) -> None:
    """`torch.tensor(..., requires_grad=True)` is a leaf that requires grad as `torch.ones` is (it lost
    the flag once), and the builtin `sum` saves nothing (only what it adds may): the second backward is
    flagged exactly when torch raises."""
    from gradguard.analysis import analyze

    source = TWICE.format(make=make, combine=combine)
    try:
        exec(compile(source, "twice.py", "exec"), {})
        raised = False
    except RuntimeError as exc:
        assert "second time" in str(exc)
        raised = True
    assert raised is raises
    found = [(d.code, d.span.start.row) for d in analyze(source)]
    assert found == ([("GG001", 7)] if raises else [])


def test_grad_mode_facts() -> None:
    from gradguard.analysis.api.facts import GradMode

    with torch.no_grad():
        for fact in _hand(lambda f: f.grad_mode is GradMode.ON, receiver=None):
            with resolve(fact.name)():
                assert torch.is_grad_enabled(), fact.name
    for fact in _hand(lambda f: f.grad_mode in (GradMode.OFF, GradMode.INFERENCE), receiver=None):
        with resolve(fact.name)():
            assert not torch.is_grad_enabled(), fact.name
    for fact in _hand(lambda f: f.grad_mode is GradMode.SET, receiver=None):
        with resolve(fact.name)(False):
            assert not torch.is_grad_enabled(), fact.name


def test_parameters_are_leaves_that_require_grad() -> None:
    for fact in _hand(lambda f: f.returns is Returns.LEAF, receiver=None):
        made = resolve(fact.name)(torch.ones(2))
        assert made.is_leaf and made.requires_grad


def test_lbfgs_calls_its_closure_more_than_once_per_step() -> None:
    weight = torch.ones(2, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight])
    calls = []

    def closure() -> Any:
        calls.append(1)
        optimizer.zero_grad()
        loss = ((weight - 3) ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    fact = api.lookup("torch.optim.LBFGS.step")
    assert fact is not None and fact.calls is not None and 1 < len(calls) <= fact.calls.times
    assert knowledge.MULTI_CLOSURE_OPTIMIZERS == frozenset({"torch.optim.LBFGS"})


DISTRIBUTION_ARGS: dict[str, dict[str, Any]] = {
    "Binomial": {"total_count": 3}, "NegativeBinomial": {"total_count": 3}, "Multinomial": {"total_count": 3},
    "RelaxedBernoulli": {"temperature": torch.tensor(0.5)},
    "RelaxedOneHotCategorical": {"temperature": torch.tensor(0.5)},
}


def _distribution(fact: Fact, parameter: Any) -> Any:
    short = fact.name.rsplit(".", 1)[-1]
    if "logits" in fact.cached:
        return resolve(fact.name)(logits=parameter, **DISTRIBUTION_ARGS.get(short, {}))
    matrix = parameter.unsqueeze(1) * parameter + torch.eye(3) * 3
    if short == "LowRankMultivariateNormal":
        return resolve(fact.name)(parameter, parameter.unsqueeze(1), parameter.exp())
    if short == "Wishart":
        return resolve(fact.name)(df=torch.tensor(4.0), covariance_matrix=matrix)
    return resolve(fact.name)(parameter, covariance_matrix=matrix)


def test_distributions_cache_what_they_say_on_first_read() -> None:
    checked = 0
    for fact in [f for f in api.hand_facts() if f.cached and f.name.startswith("torch.distributions.")]:
        parameter = torch.ones(3, requires_grad=True).clone()
        made = _distribution(fact, parameter)
        for attribute in fact.cached:
            first = getattr(made, attribute)
            assert first.grad_fn is not None and getattr(made, attribute) is first, (fact.name, attribute)
            checked += 1
    assert checked >= 20
    assert torch.distributions.Normal(torch.zeros(1), torch.ones(1)).scale is not None


def test_legacy_weight_norm_caches_the_weight_until_the_next_forward() -> None:
    fact = api.lookup("torch.nn.utils.weight_norm")
    assert fact is not None and fact.cached == ("weight",)
    with pytest.warns(FutureWarning):
        layer = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))
    first = layer.weight
    assert layer.weight is first and first.grad_fn is not None
    layer(torch.ones(1, 2))
    assert layer.weight is not first


LEGACY_NORM = """\
import torch
import torch.nn as nn
from torch.nn.utils import {norm}

layer = {norm}(nn.Linear(3, 3))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
kernel = layer.weight
for step in range(3):
    {inside}
    loss = layer(torch.randn(2, 3)).pow(2).mean() + kernel.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize(("norm", "inside", "raises"), [
    ("weight_norm", "pass", True),  # computed with a graph when applied
    ("spectral_norm", "pass", False),  # a copy without graph until the first forward
    ("weight_norm", "kernel = layer.weight", True),  # the last forward's, freed by its backward
    ("spectral_norm", "kernel = layer.weight", True),
])
def test_legacy_norm_weights_read_before_a_forward(norm: str, inside: str, raises: bool) -> None:
    """What the legacy hooks leave in `weight` before the first forward and between forwards, as the
    facts say (`Computes.FORWARD` / `AFTER_FORWARD`): the analysis flags the backward exactly when
    torch raises."""
    from gradguard.analysis import analyze
    from gradguard.analysis.api import Computes

    fact = api.lookup(f"torch.nn.utils.{norm}")
    assert fact is not None and fact.computes is (Computes.FORWARD if norm == "weight_norm" else Computes.AFTER_FORWARD)
    source = LEGACY_NORM.format(norm=norm, inside=inside)
    try:
        exec(compile(source, "norm.py", "exec"), {})
        raised = False
    except RuntimeError as exc:
        assert "second time" in str(exc)
        raised = True
    assert raised is raises
    assert [d.span.start.row for d in analyze(source)] == ([12] if raises else [])


def test_parametrizations_recompute_on_each_read_except_inside_cached() -> None:
    layer = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(2, 2))
    assert layer.weight is not layer.weight
    cached = api.lookup("torch.nn.utils.parametrize.cached")
    assert cached is not None and cached.caches is api.Cache.BLOCK
    with torch.nn.utils.parametrize.cached():
        assert layer.weight is layer.weight


def test_tensor_dataset_and_loader_keep_the_graph_of_what_they_store() -> None:
    x = torch.ones(4, 2, requires_grad=True) * 2
    fact = api.lookup("torch.utils.data.TensorDataset")
    assert fact is not None and fact.stores is api.Role.ARGUMENTS
    dataset = torch.utils.data.TensorDataset(x)
    assert dataset[0][0].grad_fn is not None
    (batch,) = next(iter(torch.utils.data.DataLoader(dataset, batch_size=2)))
    assert batch.grad_fn is not None


def test_forward_hooks_see_the_output_with_its_graph() -> None:
    fact = api.lookup("register_forward_hook", api.Receiver.MODULE)
    assert fact is not None and fact.calls is not None and fact.calls.passes == ("module", "input", "output")
    seen = []
    layer = torch.nn.Linear(2, 2)
    layer.register_forward_hook(lambda module, inputs, output: seen.append(output))
    layer(torch.ones(1, 2))
    assert seen[0].grad_fn is not None


def test_checkpoint_calls_its_function_again_in_backward() -> None:
    from torch.utils.checkpoint import checkpoint

    calls = []

    def double(t: Any) -> Any:
        calls.append(1)
        return (t * t).sum()

    checkpoint(double, torch.ones(2, requires_grad=True), use_reentrant=False).backward()
    fact = api.lookup("torch.utils.checkpoint.checkpoint")
    assert fact is not None and fact.calls is not None and fact.calls.when is When.RECOMPUTE
    assert len(calls) == 2


# -- the lookup and the compatibility layer -----------------------------------------------------------


def test_lookup_by_qualified_name_and_by_method_on_a_receiver() -> None:
    assert api.lookup("torch.autograd.backward").backward is api.Backward.BACKWARD
    assert api.lookup("backward", Receiver.ACCELERATOR).root is api.Role.ARGUMENT
    assert api.lookup("zero_", Receiver.TENSOR).keeps_history is True
    assert api.lookup("zero_") is None
    assert api.lookup("no.such.thing") is None
    project = (Fact("utils.repackage_hidden", returns=Returns.CUT, source="config"),)
    assert api.lookup("utils.repackage_hidden", project=project) is project[0]


def test_knowledge_names_keep_their_types() -> None:
    for name in knowledge.NAMES:
        value = getattr(knowledge, name)
        if name == "DISTRIBUTION_PREFIX":
            assert value == "torch.distributions."
        elif name == "FRAMEWORK_BACKWARD":
            assert value and all(isinstance(p, tuple) and len(p) == 2 for p in value)
        else:
            assert isinstance(value, frozenset) and value and all(isinstance(v, str) for v in value), name


def test_the_lint_path_reads_the_facts_without_torch() -> None:
    script = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "from gradguard.analysis import api, knowledge\n"
        "assert len(api.all_facts()) > 1000\n"
        "assert all(getattr(knowledge, n) is not None for n in knowledge.NAMES)\n"
        "assert api.lookup('mul', api.Receiver.TENSOR).saves is True\n"
        "assert not any(m == 'torch' or m.startswith('torch.') for m in sys.modules if sys.modules[m] is not None)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_loader_knows_which_signature_labels_carry_a_graph() -> None:
    weights = {label for label in GEN._GRAPH_SHAPES if label.startswith("W")}
    assert torch_ops._GRAPH_ARGUMENTS == (set(GEN._GRAPH_SHAPES) - weights) | {"L[V,V]"}


# The arguments a `Writes` fact's call is tried with: how to build it (a module class) and what to
# call it, or the function's arguments, with the tensor it writes in place.
WRITTEN_BY = {
    "torch.nn.Embedding": ((10, 4), (torch.tensor([1, 2]),)),
    "torch.nn.EmbeddingBag": ((10, 4), (torch.tensor([[1, 2], [3, 4]]),)),
}


def _version_after(fact: Fact, given: bool) -> tuple[int, int]:
    """The version of the tensor a `Writes` fact names before and after one call, with its `when`
    keyword given (1.0) or not."""
    assert fact.writes is not None
    extra = {fact.writes.when: 1.0} if given and fact.writes.when else {}
    target = resolve(fact.name)
    if fact.returns is Returns.MODULE:
        built, called = WRITTEN_BY[fact.name]
        module = target(*built, **extra)
        written = getattr(module, fact.writes.target)
        before = written._version
        module(*called)
        return before, written._version
    weight = torch.randn(10, 4, requires_grad=True)
    with torch.no_grad():
        weight.mul_(3)  # rows past the norm, as the constraint is meant for
    args = [torch.tensor([[1, 2]]), weight]
    assert args[fact.writes.target] is weight and fact.writes.keyword == "weight"
    before = weight._version
    target(*args, **extra)
    return before, weight._version


def test_writes_facts_are_in_place_writes_in_torch() -> None:
    """What a `Writes` fact says a call writes in place changes version under it (a graph that kept
    it fails), only when the `when` keyword is given."""
    checked = 0
    for fact in api.hand_facts():
        if fact.writes is None:
            continue
        before, after = _version_after(fact, given=True)
        assert after > before, fact.name
        before, after = _version_after(fact, given=False)
        assert after == before, fact.name
        checked += 1
    assert checked >= 4


def test_a_copy_of_a_module_has_parameters_of_its_own() -> None:
    copies = [fact for fact in api.hand_facts() if fact.returns is Returns.COPY]
    assert copies
    for fact in copies:
        original = torch.nn.Linear(2, 2)
        copied = resolve(fact.name)(original)
        assert isinstance(copied, torch.nn.Linear) and copied is not original, fact.name
        assert all(a is not b for a, b in zip(copied.parameters(), original.parameters(), strict=True)), fact.name


def test_what_shares_the_receiver_s_storage_shares_its_version() -> None:
    """A fact's `shares_storage` (and every view): a write through the result changes the version of
    the receiver, which a graph that kept the receiver checks."""
    shared = [f for f in api.hand_facts() if f.receiver is Receiver.TENSOR and (f.shares_storage or (
        f.returns is Returns.VIEW and not f.name.startswith("__")))]
    assert any(f.shares_storage for f in shared)
    checked = 0
    for fact in shared:
        receiver = torch.ones(2, 3)
        before = receiver._version
        try:
            found = getattr(receiver, fact.name)
            result = found() if callable(found) else found  # a method without arguments, or a property
        except (TypeError, RuntimeError):
            continue  # it needs arguments
        (result[0] if isinstance(result, tuple) else result).add_(1)
        assert receiver._version > before, fact.name
        checked += 1
    assert checked >= 6


def test_a_loss_s_target_is_where_torch_takes_it() -> None:
    """`Fact.reference`: the argument a loss compares its input against, by torch's own signature (the
    functional form, and the `forward` of the module class); either side of a difference or ratio."""
    import inspect

    for fact in api.hand_facts():
        if fact.reference is None:
            continue
        position, keyword = fact.reference
        target = resolve(fact.name)
        if position < 0:
            assert target(torch.ones(2), torch.ones(2)).shape == (2,), fact.name  # a binary op
            continue
        function = target.forward if isinstance(target, type) else target
        parameters = list(inspect.signature(function).parameters)[1 if isinstance(target, type) else 0:]
        assert parameters[position] == keyword, (fact.name, parameters)


def test_the_monitor_finds_a_loss_s_target_at_the_input_its_node_gives() -> None:
    """`api.reference_nodes`: the node of each comparison, and the input (`next_functions` slot) through
    which its reference reaches it, as torch builds them."""
    nodes = api.reference_nodes()
    assert nodes["MseLossBackward0"] == 1 and nodes["SubBackward0"] == -1
    made = torch.randn(3, requires_grad=True) * 2
    reference = torch.rand(3, requires_grad=True) * 0.5 + 0.25
    for name, fact in ((n, api.lookup(n)) for n in ("torch.nn.functional.mse_loss", "torch.nn.functional.huber_loss",
                                                     "torch.nn.functional.binary_cross_entropy")):
        assert fact is not None and fact.reference is not None
        out = resolve(name)(made.sigmoid(), reference)
        node = out.grad_fn
        assert nodes[node.name()] == fact.reference[0]
        assert node.next_functions[fact.reference[0]][0] is reference.grad_fn
    assert nodes[(made - reference).grad_fn.name()] == -1 and nodes[(made / reference).grad_fn.name()] == -1
