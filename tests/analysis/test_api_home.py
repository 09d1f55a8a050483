"""API facts have one home: no name of the API appears as a literal in the analysis, the rules or the
runtime outside `gradguard/analysis/api/`; they ask the facts. The few strings that only look like
API names (a container kind, a JSON key, a torch-internal module the runtime must recognise) are
listed here with the reason, and each listed one must still occur, so the list only shrinks."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from gradguard.analysis import api
from gradguard.analysis.api import Backward, Receiver, Returns, parametrize, torch_functions, torch_tensor
from gradguard.analysis.api.packages import KNOWN, TORCH

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gradguard"
SCANNED = ("analysis", "rules", "runtime")
HOME = PACKAGE / "analysis" / "api"

# The libraries whose APIs the facts model: a string under one of them is a qualified API name.
MODELLED = (TORCH, "lightning", "pytorch_lightning", "accelerate", "deepspeed", "transformers", "mmengine", "mmcv")

PREFILTER = "the prefilter's words, written out so that warm runs never import the facts; checked against them"
# (file under gradguard/, literal): why it is not an API name there.
ALLOWED: dict[tuple[str, str], str] = {
    ("analysis/detect.py", "tuple"): "the shape of a carrier (a tuple state), not the builtin",
    ("analysis/expressions.py", "tuple"): "the shape of a carrier",
    ("analysis/values.py", "tuple"): "what a list's items are (`Value.items`), the shape a fix detaches",
    ("analysis/expressions.py", "list"): "the kind of a container a read saw (`Read.container`)",
    ("analysis/expressions.py", "dict"): "the kind of a container a read saw (`Read.container`)",
    ("analysis/knowledge.py", "tuple"): "the value of the `state` field of recurrent-module facts",
    ("analysis/knowledge.py", "any"): "a parameter of the helper that filters facts by receiver",
    ("analysis/knowledge.py", "all"): "the value of the `submodules` field of module facts",
    ("analysis/knowledge.py", "items"): "the value of the `submodules` field of container facts",
    ("rules/__init__.py", "tuple"): "the shape of a carrier, as the fixes spell it",
    ("rules/__init__.py", "list"): "the shape of a carrier",
    ("rules/__init__.py", "dict"): "the shape of a carrier",
    ("rules/gg003_state_not_detached.py", "list"): "the shape of a carrier (a list state)",
    ("rules/gg003_state_not_detached.py", "dict"): "the shape of a carrier (a dict state)",
    ("runtime/causes.py", "tuple"): "what a container's items hold (per-layer (h, c) tuples)",
    ("runtime/carrier.py", "tuple"): "the kind of container a tensor was found in",
    ("runtime/carrier.py", "list"): "the kind of container",
    ("runtime/carrier.py", "dict"): "the kind of container",
    ("runtime/context.py", "list"): "the kind of container",
    ("runtime/context.py", "dict"): "the kind of container",
    ("runtime/diagnosis.py", "tuple"): "the kind of container, in the report",
    ("runtime/diagnosis.py", "list"): "the kind of container, in the report",
    ("runtime/diagnosis.py", "dict"): "the kind of container, in the report",
    ("runtime/diagnosis.py", "object"): "a JSON schema type of the report, not the builtin base class",
    ("runtime/monitor.py", "log"): "a slot of the monitor's state (its call log)",
    ("runtime/records.py", "append"): "a slot of the call log (its ring's append)",
    ("runtime/inplace.py", "type"): "a field of autograd's error message, parsed",
    ("runtime/source.py", "eval"): "the mode of `ast.parse`",
    ("runtime/monitor.py", "torch.autograd.graph"): "where torch keeps the engine the monitor wraps",
    ("runtime/monitor.py", "torch._subclasses"): "a torch-internal module: a fake tensor while tracing",
    ("runtime/monitor.py", "torch._functorch"): "a torch-internal module: a functional tensor while tracing",
    ("runtime/monitor.py", "torch.fx"): "a torch-internal module: a proxy while tracing",
    ("runtime/dynamo.py", "torch._dynamo"): "the compiler the monitor keeps out of its own frames",
    ("runtime/deep.py", "torch._dynamo.utils"): "the compiler's module, read for its counters",
    ("runtime/explain.py", "torch.distributed"): "imported to read the rank of the process",
    ("rules/gg008_framework_calls_backward.py", "name"): "the attribute of a syntax node, not parametrize's keyword",
    ("analysis/__init__.py", "backward"): PREFILTER,
    ("analysis/__init__.py", "create_graph"): PREFILTER,
    ("analysis/__init__.py", "manual_backward"): PREFILTER,
    ("analysis/__init__.py", "retain_graph"): PREFILTER,
    ("analysis/__init__.py", "retain_variables"): PREFILTER,
    ("analysis/__init__.py", "update_params"): PREFILTER,
    ("runtime/source.py", "name"): "the attribute of a syntax node, not parametrize's keyword",
}


def _keywords() -> frozenset[str]:
    """The keyword arguments the facts speak of (`retain_graph`, `inputs`, a callback's `closure`)."""
    placed = (torch_functions.BACKWARD_ROOTS, torch_functions.BACKWARD_RETAIN, torch_functions.BACKWARD_CREATE,
              torch_functions.GRAD_OUTPUTS, torch_functions.GRAD_INPUTS, torch_functions.GRAD_RETAIN,
              torch_functions.GRAD_CREATE, torch_tensor.BACKWARD_RETAIN, torch_tensor.BACKWARD_CREATE)
    called = {fact.calls.keyword for fact in api.hand_facts() if fact.calls is not None and fact.calls.keyword}
    return frozenset({keyword for _, keyword in placed} | set(torch_tensor.GRAPH_KEYWORDS)
                     | set(torch_functions.ROOT_KEYWORDS) | set(parametrize.NAME_KEYWORDS) | called)


def _api_names() -> frozenset[str]:
    hand = {fact.name for fact in api.hand_facts()}
    generated = {fact.name for fact in api.all_facts() if "." in fact.name}
    return frozenset(hand | generated | {family.prefix for family in api.families()} | _keywords())


def _is_api_name(text: str, names: frozenset[str]) -> bool:
    return text in names or any(text.startswith(root + ".") for root in MODELLED)


def _strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """String constants other than docstrings, dict display keys and f-string parts."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        elif isinstance(node, ast.Dict):
            skip.update(id(key) for key in node.keys if key is not None)
        elif isinstance(node, ast.JoinedStr):
            skip.update(id(value) for value in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in skip:
            yield node


def _text(node: ast.Constant) -> str:
    """A string constant's text; a bytes constant's too (the prefilter's words were bytes)."""
    return node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value


def _literals() -> dict[tuple[str, str], list[int]]:
    names = _api_names()
    found: dict[tuple[str, str], list[int]] = {}
    for part in SCANNED:
        for path in sorted((PACKAGE / part).rglob("*.py")):
            if HOME in path.parents:
                continue
            where = path.relative_to(PACKAGE).as_posix()
            for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
                if _is_api_name(_text(node), names):
                    found.setdefault((where, _text(node)), []).append(node.lineno)
    return found


def test_no_api_name_is_a_literal_outside_the_facts_home() -> None:
    unexplained = {key: rows for key, rows in _literals().items() if key not in ALLOWED}
    assert not unexplained, "API names written outside gradguard/analysis/api/ (ask the facts instead):\n" + \
        "\n".join(f"  gradguard/{path}:{rows[0]}: {text!r}" for (path, text), rows in sorted(unexplained.items()))


def test_every_allowed_literal_still_occurs() -> None:
    found = _literals()
    stale = sorted(key for key in ALLOWED if key not in found)
    assert not stale, f"no longer written, remove from ALLOWED: {stale}"


def test_the_scan_sees_an_api_literal() -> None:
    names = _api_names()
    tree = ast.parse('def f(m):\n    """backward"""\n    return m == "backward" or {"step": 1} or m == "torch.nn." '
                     'or m == "retain_graph" or m == b"update_params"\n')
    seen = [_text(node) for node in _strings(tree) if _is_api_name(_text(node), names)]
    assert seen == ["backward", "torch.nn.", "retain_graph", "update_params"]


# -- the lookups the interpreter and the runtime ask ---------------------------------------------


def test_family_of_a_class_by_its_longest_prefix() -> None:
    assert api.family_of("torch.nn.TransformerEncoderLayer").returns is Returns.MODULE  # type: ignore[union-attr]
    assert api.family_of("torch.optim.SGD").returns is Returns.OPTIMIZER  # type: ignore[union-attr]
    # A scheduler is under torch.optim. and is no optimizer.
    assert api.family_of("torch.optim.lr_scheduler.StepLR").returns is Returns.UNKNOWN  # type: ignore[union-attr]
    assert api.family_of("torch.distributions.Normal").returns is Returns.DISTRIBUTION  # type: ignore[union-attr]
    assert api.family_of("torch.utils.data.Sampler").returns is Returns.DATA  # type: ignore[union-attr]
    # Functions are no class of a family; nor are names outside every family.
    assert api.family_of("torch.nn.functional.relu") is None
    assert api.family_of("mylib.nn.Linear") is None


def test_makes_prefers_a_class_s_own_fact_to_its_family() -> None:
    assert api.makes("torch.nn.Parameter") is Returns.LEAF
    assert api.makes("torch.nn.Module") is Returns.MODULE
    assert api.makes("torch.utils.data.DataLoader") is Returns.DATA
    assert api.makes("project.Model") is None


def test_method_takes_the_first_receiver_with_a_fact() -> None:
    step = api.method("step", Receiver.CONTAINER, Receiver.OPTIMIZER)
    assert step is not None and step.receiver is Receiver.OPTIMIZER and step.updates_weights
    assert api.method("append", Receiver.CONTAINER).stores is not None  # type: ignore[union-attr]
    assert api.method("no_such_method", Receiver.TENSOR, Receiver.MODULE) is None


def test_backward_names_and_methods() -> None:
    assert api.backward_name(Backward.BACKWARD) == torch_tensor.BACKWARD
    assert api.backward_name(Backward.GRAD) == torch_functions.GRAD_FUNCTION
    methods = api.backward_methods()
    # The tensor's, accelerate's, DeepSpeed's and Lightning's backward; never a function's last part.
    assert {torch_tensor.BACKWARD, "manual_backward"} <= methods
    assert "grad" not in methods


def test_builtins_and_hooks_come_from_facts() -> None:
    assert {"len", "zip", "enumerate", "isinstance"} <= api.builtin_names()
    assert not any("." in name for name in api.builtin_names())
    hooks = {fact.name for fact in api.forward_hooks()}
    assert hooks == {"register_forward_hook", "register_forward_pre_hook"}
    assert api.weight_updates() == frozenset({"step"})


def test_known_packages_include_every_modelled_library() -> None:
    assert set(MODELLED) <= KNOWN


def prefilter_words() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What the facts say the prefilter must look for: (words, names called, keywords)."""
    runs = [fact for fact in api.all_facts() if fact.backward is not None]
    methods = {fact.name for fact in runs if fact.receiver is not None}
    functions = [fact.name.split(".") for fact in runs if fact.receiver is None]
    keywords = set(torch_tensor.GRAPH_KEYWORDS)
    words = methods | {parts[-2] for parts in functions} | keywords
    return frozenset(words), frozenset(methods | {parts[-1] for parts in functions}), frozenset(keywords)


def test_the_prefilter_looks_for_what_the_facts_say_runs_a_backward() -> None:
    import gradguard.analysis as analysis

    words, called, keywords = prefilter_words()
    groups = (analysis._WORDS, analysis._CALLED, analysis._KEYWORDS)
    decoded = (frozenset(w.decode() for w in group) for group in groups)
    assert tuple(decoded) == (words, called, keywords)
    assert frozenset(w.decode() for w in analysis._STEPS) == api.framework_steps()
