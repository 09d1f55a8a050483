"""Write gradguard/analysis/api/torch_ops.json: what the installed torch does with each public op.

Each public function of `torch`, `torch.nn.functional`, `torch.linalg`, `torch.special`, `torch.fft`
and `torch.nn.init`, and each public Tensor method, is tried on small float tensors that carry a graph
(non-leaf tensors of shape (3,) or (3, 3) cloned from leaves that require grad), with the first argument
list of a fixed sequence that it accepts. From the result the script reads torch's own answer: the
`grad_fn` and the `_saved_*` tensors of the nodes it added, whether a second backward through them
raises (the op saves tensors), whether an output is a view of an input (`._base`), whether the outputs
carry no graph (integer or bool tensors, Python values), and for in-place ops whether the receiver's
history was rebased onto the new node (kept) or dropped.

Run: `python tools/generate_torch_facts.py` (`--check` compares with the shipped table instead).
The lint path never imports this module, nor torch: it reads the JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import torch

TABLE = Path(__file__).resolve().parent.parent / "gradguard" / "analysis" / "api" / "torch_ops.json"

# Namespaces whose public functions are tried, by the prefix their facts are named with.
NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft", "torch.nn.init")

# Calls with effects outside their result (global state, files, processes, the terminal): never run.
UNSAFE_PREFIXES = ("set_", "use_", "manual_seed", "seed", "initial_seed", "save", "load", "compile",
                   "export", "cuda", "mps", "xpu", "jit", "vmap", "cond", "while_loop", "print",
                   "get_", "is_", "are_", "sym_", "share_memory", "pin_memory", "record_stream",
                   "register_", "backward", "from_file", "from_dlpack", "to_dlpack", "autocast",
                   "typename", "wait", "fork", "lobpcg", "pca_lowrank", "svd_lowrank", "unravel_index")
# Dunder Tensor methods that are ops (the others are protocol plumbing).
DUNDER_OPS = frozenset(
    f"__{name}__" for name in (
        "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv",
        "itruediv", "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "imod", "pow", "rpow", "ipow",
        "matmul", "rmatmul", "neg", "pos", "abs", "invert", "and", "or", "xor", "iand", "ior", "ixor",
        "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "getitem", "float", "int", "bool", "len",
    )
)

_SIZE = 3
# Shapes of the float tensors that carry a graph, by their label in an argument list.
_GRAPH_SHAPES: dict[str, tuple[int, ...]] = {
    "V": (3,), "M": (3, 3), "P": (3, 3), "S": (), "U": (3,), "C": (1, 3, 3), "X3": (1, 1, 3),
    "X4": (1, 1, 3, 3), "X5": (1, 1, 3, 3, 3), "W1": (1,), "W3": (1, 1, 2), "W4": (1, 1, 2, 2),
    "W5": (1, 1, 2, 2, 2),
}


# Argument lists to try, in order; each part is a label (see `arguments`).
SIGNATURES: tuple[tuple[str, ...], ...] = (
    # An einsum equation that multiplies (what real equations do; the sublist form below only permutes).
    ("i,j->ij", "V", "V"),
    ("V",), ("M",), ("V", "V"), ("M", "M"), ("V", "0"), ("M", "0"), ("M", "1"),
    ("V", "V", "V"), ("M", "M", "M"), ("V", "I"), ("M", "0", "I"), ("M", "I"),
    ("V", "B"), ("V", "B", "0.5"), ("V", "0", "I"), ("V", "0", "I", "V"), ("M", "0", "1"),
    ("V", "2"), ("M", "(9,)"), ("V", "(3,)"), ("L[V,V]",), ("L[V,V]", "0"),
    ("P",), ("P", "M"), ("X4",), ("X4", "W4"), ("X3", "W3"), ("X4", "2"), ("X3", "2"),
    ("V", "0.5"), ("V", "0.5", "0.5"), ("M", "I", "I"),
    ("S",), ("U", "U"), ("M", "V"), ("V", "M", "V"), ("C", "C"), ("C", "C", "C"), ("M", "C", "C"),
    ("V", "(0,)"), ("M", "(1,0)"), ("V", "0", "0", "2"), ("V", "0", "(3,1)"), ("V", "0", "2", "1"),
    ("M", "2", "0", "0.5"), ("V", "0", "I", "0.5"), ("V", "(I,)", "V"), ("V", "B", "V"),
    ("V", "0", "I", "V", "sum"), ("M", "V", "0", "0"), ("V", "(1,1)"), ("I",), ("I", "I"),
    ("I", "M"), ("X4", "1"), ("V", "W1"), ("V", "0.5", "True"), ("V", "(3,)", "(1,)"),
    ("X5", "2"), ("X5", "W5"),
    ("3",), ("3", "3"), ("(3,)",), ("(3,)", "0.5"), ("0", "1", "3"), ("3", "(3,)"),
    # Probabilities (values in (0, 1)): sampling ops refuse negative inputs (`multinomial`, `bernoulli`).
    ("U",), ("U", "1"),
)
SEPARATOR = ";"


def _graph(*shape: int) -> torch.Tensor:
    return torch.randn(shape, requires_grad=True).clone()


def arguments(label: str) -> tuple[tuple[Any, ...], list[torch.Tensor]]:
    """Fresh arguments for a signature label (`V;0`), and the float tensors among them that carry a
    graph: non-leaf tensors cloned from leaves that require grad, so that in-place ops are allowed."""
    args: list[Any] = []
    tracked: list[torch.Tensor] = []
    for part in label.split(SEPARATOR):
        if part in _GRAPH_SHAPES:
            if part == "P":  # symmetric positive definite, for the decompositions
                base = torch.randn(_SIZE, _SIZE)
                value = (base @ base.T + _SIZE * torch.eye(_SIZE)).requires_grad_().clone()
            else:
                value = _graph(*_GRAPH_SHAPES[part])
            if part == "U":
                value = value.sigmoid()
            tracked.append(value)
            args.append(value)
        elif part == "I":
            args.append(torch.tensor([0, 2, 1]))
        elif part == "(I,)":
            args.append((torch.tensor([0, 2, 1]),))
        elif part == "B":
            args.append(torch.tensor([True, False, True]))
        elif part == "L[V,V]":
            pair = [_graph(_SIZE), _graph(_SIZE)]
            tracked.extend(pair)
            args.append(pair)
        elif part == "sum" or "->" in part:
            args.append(part)
        elif part == "True":
            args.append(True)
        elif part.startswith("("):
            args.append(tuple(int(n) for n in part.strip("(,)").split(",")))
        elif part == "0.5":
            args.append(0.5)
        else:
            args.append(int(part))
    return tuple(args), tracked


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    return []


def _saved_tensor_names(node: Any) -> list[str]:
    names = []
    for attr in dir(node):
        if attr.startswith("_saved_") and not attr.endswith("_raw"):
            with contextlib.suppress(Exception):
                held = getattr(node, attr)
                if isinstance(held, torch.Tensor) or (
                        isinstance(held, (tuple, list)) and any(isinstance(h, torch.Tensor) for h in held)):
                    names.append(attr.removeprefix("_saved_"))
    return names


def _keeps_an_input(nodes: Iterable[Any], inputs: list[torch.Tensor]) -> bool:
    """Whether one of the nodes keeps one of the inputs themselves (or a view of one) for its backward:
    a write into that input in place then fails it."""
    storages = {t.untyped_storage().data_ptr() for t in inputs}
    for node in nodes:
        for attr in dir(node):
            if not attr.startswith("_saved_") or attr.endswith("_raw"):
                continue
            with contextlib.suppress(Exception):
                held = getattr(node, attr)
                for tensor in held if isinstance(held, (tuple, list)) else (held,):
                    if isinstance(tensor, torch.Tensor) and tensor.untyped_storage().data_ptr() in storages:
                        return True
    return False


def _added_nodes(outputs: Iterable[torch.Tensor], stop: set[Any]) -> list[Any]:
    """The autograd nodes between the outputs and the inputs' own nodes."""
    seen: dict[int, Any] = {}
    todo = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or node in stop or type(node).__name__ == "AccumulateGrad":
            continue
        seen[id(node)] = node
        todo.extend(next_node for next_node, _ in node.next_functions)
    return list(seen.values())


def _reaches(node: Any, target: Any) -> bool:
    seen: set[int] = set()
    todo = [node]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        if current is target:
            return True
        seen.add(id(current))
        todo.extend(n for n, _ in current.next_functions)
    return False


def _kind(tensor: torch.Tensor) -> str:
    if tensor.dtype == torch.bool:
        return "bool"
    if tensor.is_floating_point() or tensor.is_complex():
        return "float"
    return "int"


def _second_backward_raises(outputs: list[torch.Tensor]) -> bool | None:
    carrying = [t for t in outputs if t.grad_fn is not None]
    if not carrying:
        return None
    try:
        total = sum(t.real.sum() if t.is_complex() else t.sum() for t in carrying)
        total.backward()
    except Exception:  # noqa: BLE001 - a sparse or mkldnn output, or a backward torch does not implement
        return None
    try:
        total.backward()
    except RuntimeError as exc:
        return "second time" in str(exc) or "already been freed" in str(exc)
    return False


def _seed() -> None:
    """The same random inputs for every op. Only the CPU generator: `torch.manual_seed` also queues a
    lazy seeding of each accelerator backend with the formatted stack of its caller, which costs
    more than the probes themselves when the caller's stack is deep (under pytest: 60 s instead of 8)."""
    torch.default_generator.manual_seed(0)


def probe(name: str, func: Callable[..., Any] | None, receiver_method: str | None = None,
          ) -> tuple[dict[str, Any] | None, str]:
    """torch's answer for the callable `name` (the Tensor method `receiver_method` when given), or
    the reason it could not be called."""
    reason = "no-signature"
    for parts in SIGNATURES:
        if receiver_method is not None and parts[0] not in _GRAPH_SHAPES:
            continue
        label = SEPARATOR.join(parts)
        _seed()
        args, tracked = arguments(label)
        before = [(t._version, t.grad_fn) for t in tracked]
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                if receiver_method is not None:
                    result = getattr(args[0], receiver_method)(*args[1:])
                else:
                    assert func is not None
                    result = func(*args)
        except (TypeError, ValueError, IndexError, AttributeError, AssertionError):
            reason = "no-signature"
            continue
        except NotImplementedError:
            reason = "not-implemented"
            continue
        except Exception:  # noqa: BLE001 - torch raises its own error classes; any means "not so"
            reason = "runtime-error"
            continue
        underscored = name.endswith("_") and not name.endswith("__")
        fact = _describe(label, tracked, before, result, underscored)
        if receiver_method is None and func is not None and _takes_inplace(func):
            _seed()
            again, kept = arguments(label)
            if _writes_its_input_given_inplace(lambda: func(*again, inplace=True), kept):  # type: ignore[misc]
                fact["inplace-option"] = True
        if fact.get("saves-result"):
            # Given a dimension too (`softmax(x, dim=1)`; `max(x, dim=1)` returns values and indices).
            _seed()
            again, _ = arguments(label)
            with_dim = _keeps_output_with_dim(
                (lambda: getattr(again[0], receiver_method)(*again[1:], dim=0)) if receiver_method is not None
                else (lambda: func(*again, dim=0)))  # type: ignore[misc]
            if with_dim is not None:
                fact["saves-result-dim"] = with_dim
        return fact, "ok"
    return None, reason


def _takes_inplace(func: Callable[..., Any]) -> bool:
    try:
        return "inplace" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _writes_its_input(cls: type, init: tuple[Any, ...], label: str) -> int | None:
    """For a module class whose constructor takes `inplace`: its position among the constructor's
    parameters, when built with `inplace=True` the module returns its very input (written in place);
    None otherwise."""
    try:
        names = [n for n in inspect.signature(cls.__init__).parameters if n != "self"]
    except (TypeError, ValueError):
        return None
    if "inplace" not in names:
        return None
    _seed()
    args, tracked = arguments(label)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            result = cls(*init, inplace=True)(*args)
    except Exception:  # noqa: BLE001 - any failure means "not so"
        return None
    return names.index("inplace") if any(o is t for o in _tensors(result) for t in tracked) else None


def _writes_its_input_given_inplace(call: Callable[[], Any], tracked: list[torch.Tensor]) -> bool:
    """Whether a function called with `inplace=True` returns its very input (written in place)."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            result = call()
    except Exception:  # noqa: BLE001 - any failure means "not so"
        return False
    return any(o is t for o in _tensors(result) for t in tracked)


def _keeps_output_with_dim(call: Callable[[], Any]) -> bool | None:
    """Whether the op called with a `dim` keyword still returns one tensor that its node keeps; None
    when it takes no such keyword."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            result = call()
    except Exception:  # noqa: BLE001 - any error means it takes no `dim` here
        return None
    return isinstance(result, torch.Tensor) and result.grad_fn is not None and _keeps_its_output(result)


def _describe(label: str, tracked: list[torch.Tensor], before: list[tuple[int, Any]], result: Any,
              underscored: bool) -> dict[str, Any]:
    fact: dict[str, Any] = {"args": label}
    outputs = _tensors(result)
    if result is None:
        fact["out"] = "none"
    elif not outputs:
        fact["out"] = "value"
    else:
        fact["out"] = "tensor" if isinstance(result, torch.Tensor) else "tensors"
        fact["dtype"] = sorted({_kind(t) for t in outputs})
    modified = [i for i, t in enumerate(tracked) if t._version != before[i][0]]
    if not modified and underscored and tracked and any(o is tracked[0] for o in outputs):
        modified = [0]  # `detach_` changes the receiver in place without a new version
    if modified:
        fact["inplace"] = True
        receiver = tracked[modified[0]]
        old = before[modified[0]][1]
        now = receiver.grad_fn
        fact["keeps"] = now is not None and (now is old or _reaches(now, old))
        fact["rebases"] = now is not None and now is not old
    if any(o is t for o in outputs for t in tracked):
        fact["returns-input"] = True
    if any(o._base is not None and any(o._base is t or (t._base is not None and o._base is t._base) for t in tracked)
           for o in outputs if all(o is not t for t in tracked)):
        fact["view"] = True
    carrying = [o for o in outputs if o.grad_fn is not None]
    fact["graph"] = bool(carrying)
    if carrying:
        fact["grad-fn"] = type(carrying[0].grad_fn).__name__
        stop = {old for _, old in before if old is not None}
        saved = sorted({name for node in _added_nodes(carrying, stop) for name in _saved_tensor_names(node)})
        if saved:
            fact["saved"] = saved
        if _keeps_its_output(carrying[0]):
            fact["saves-result"] = True
        fact["saves"] = _second_backward_raises(outputs)
    return fact


def _keeps_its_output(output: torch.Tensor) -> bool:
    """Whether the node that made `output` keeps `output` itself for its backward (`relu`,
    `sigmoid`, `exp`, `softmax`): writing into the output in place then fails that backward."""
    node = output.grad_fn
    if node is None or not hasattr(node, "_saved_result"):
        return False
    try:
        kept = node._saved_result
        return isinstance(kept, torch.Tensor) and kept.data_ptr() == output.data_ptr()
    except RuntimeError:  # a tensor without storage (sparse, nested): not one a program writes into
        return False


def _public_functions(namespace: str) -> Iterator[tuple[str, Callable[..., Any]]]:
    module = importlib.import_module(namespace)
    builtin_ops = set(dir(torch._C._VariableFunctions)) if namespace == "torch" else None
    for name in sorted(dir(module)):
        if name.startswith("_") or name.startswith(UNSAFE_PREFIXES):
            continue
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
            continue
        owner = getattr(obj, "__module__", None) or ""
        if builtin_ops is not None:
            if name not in builtin_ops and owner != "torch.functional":
                continue
        elif not (owner.startswith("torch") or inspect.isbuiltin(obj)):
            continue
        yield f"{namespace}.{name}", obj


def _tensor_methods() -> Iterator[str]:
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("__") and name not in DUNDER_OPS:
            continue
        if name.startswith("_") and not name.startswith("__"):
            continue
        if name.lstrip("_").startswith(UNSAFE_PREFIXES) or not callable(getattr(torch.Tensor, name)):
            continue
        yield name


def _jobs() -> list[tuple[str, Callable[..., Any] | None, str | None]]:
    jobs: list[tuple[str, Callable[..., Any] | None, str | None]] = []
    for namespace in NAMESPACES:
        jobs.extend((qual, func, None) for qual, func in _public_functions(namespace))
    jobs.extend((f"torch.Tensor.{name}", None, name) for name in _tensor_methods())
    return jobs


def names() -> list[str]:
    """The qualified name of every op the table tries (kept or skipped), in order."""
    return [qual for qual, _, _ in _jobs()] + module_classes()


# Constructor arguments tried for torch.nn modules, in order; then inputs to call them with.
MODULE_INITS: tuple[tuple[Any, ...], ...] = ((), (3,), (3, 3), (3, 3, 1))
MODULE_INPUTS = ("M", "X3", "X4", "V", "X5", "M;M", "M;I", "V;V", "M;M;M")
# Defaults that build a model of millions of parameters: a small one says the same.
MODULE_INIT_OVERRIDES: dict[str, dict[str, int]] = {
    "Transformer": {"d_model": 4, "nhead": 1, "num_encoder_layers": 1, "num_decoder_layers": 1,
                    "dim_feedforward": 4},
}


def module_classes() -> list[str]:
    """The public torch.nn.Module subclasses in the torch.nn namespace, by qualified name."""
    return [f"torch.nn.{name}" for name in sorted(dir(torch.nn))
            if not name.startswith("_") and inspect.isclass(getattr(torch.nn, name))
            and issubclass(getattr(torch.nn, name), torch.nn.Module) and name != "Module"]


def _holds_modules(cls: type) -> bool:
    """Containers and wrappers hold the modules they are given, and so their parameters: their own
    constructor takes modules (`module`, `modules`, `values`, `parameters`) or any number of them."""
    if "__init__" not in vars(cls):
        return False
    parameters = inspect.signature(cls.__init__).parameters.values()
    return any(p.name in ("module", "modules", "values", "parameters")
               or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) for p in parameters)


def _keeps_weights(module: Any, args: tuple[Any, ...]) -> bool:
    """Called on the same inputs without a graph, whether the module's graph still keeps its parameters:
    an in-place update of them (what an optimizer's step does) then breaks its backward. A Linear's
    does not (its weight's gradient needs only the input); a Conv2d's or a LayerNorm's does."""
    plain = tuple(a.detach() if isinstance(a, torch.Tensor) else a for a in args)
    _seed()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            outputs = [o for o in _tensors(module(*plain)) if o.grad_fn is not None]
    except Exception:  # noqa: BLE001 - not callable so: assume it keeps them
        return True
    if not outputs:
        return False
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.add_(0.0)
    try:
        sum(o.real.sum() if o.is_complex() else o.sum() for o in outputs).backward()
    except RuntimeError as exc:
        return "inplace" in str(exc)
    return False


def probe_module(qualified: str) -> tuple[dict[str, Any] | None, str]:
    """Build a torch.nn module with the first constructor arguments it accepts, count what it holds,
    and call it on the first inputs it accepts."""
    cls = getattr(torch.nn, qualified.rsplit(".", 1)[-1])
    module = None
    fact: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        override = MODULE_INIT_OVERRIDES.get(cls.__name__)
        for init in ((),) if override else MODULE_INITS:
            try:
                module = cls(*init, **(override or {}))
            except Exception:  # noqa: BLE001, S112 - any failure means "not constructible so"
                continue
            fact["init"] = SEPARATOR.join(map(str, init)) if not override else "small"
            break
        if module is None:
            return None, "no-constructor"
        fact["params"] = sum(1 for _ in module.parameters())
        own = [name for name, _ in module.named_parameters(recurse=False)]
        if own:
            fact["parameter-names"] = own
        fact["buffers"] = sum(1 for _ in module.buffers())
        fact["holds-modules"] = _holds_modules(cls)
        for label in MODULE_INPUTS:
            _seed()
            args, tracked = arguments(label)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    result = module(*args)
            except Exception:  # noqa: BLE001, S112 - the same, for the inputs
                continue
            outputs = _tensors(result)
            carrying = [o for o in outputs if o.grad_fn is not None]
            fact.update({"args": label, "graph": bool(carrying)})
            if carrying:
                fact["grad-fn"] = type(carrying[0].grad_fn).__name__
                stop = {t.grad_fn for t in tracked if t.grad_fn is not None}
                fact["keeps-input"] = _keeps_an_input(_added_nodes(carrying, stop), tracked)
                if _keeps_its_output(carrying[0]):
                    fact["saves-result"] = True
                fact["saves"] = _second_backward_raises(outputs)
                if fact["params"]:
                    fact["keeps-weights"] = _keeps_weights(module, args)
            if any(o is t for o in outputs for t in tracked):
                fact["returns-input"] = True
            position = _writes_its_input(cls, init, label)
            if position is not None:
                fact["inplace-position"] = position
            break
    return fact, "ok"


def generate(only: Iterable[str] | None = None) -> dict[str, Any]:
    """The whole table (or the entries named in `only`), as the JSON document holds it."""
    wanted = set(only) if only is not None else None
    torch.set_num_threads(1)
    ops: dict[str, dict[str, Any]] = {}
    skipped: Counter[str] = Counter()
    for qual, func, method in _jobs():
        if wanted is not None and qual not in wanted:
            continue
        fact, reason = probe(qual, func, method)
        if fact is None:
            skipped[reason] += 1
        else:
            ops[qual] = fact
    modules: dict[str, dict[str, Any]] = {}
    for qual in module_classes():
        if wanted is not None and qual not in wanted:
            continue
        fact, reason = probe_module(qual)
        if fact is None:
            skipped[f"module-{reason}"] += 1
        else:
            modules[qual] = fact
    return {"torch": torch.__version__.split("+")[0], "ops": dict(sorted(ops.items())),
            "modules": dict(sorted(modules.items())), "skipped": dict(sorted(skipped.items()))}


def dump(table: dict[str, Any]) -> str:
    """The JSON text: one op a line, keys sorted, so that a regeneration diffs line by line."""
    lines = [f'{{"torch":{json.dumps(table["torch"])},',
             f'"skipped":{json.dumps(table["skipped"], sort_keys=True, separators=(",", ":"))},',
             '"modules":{']
    for section, last in (("modules", False), ("ops", True)):
        items = sorted(table[section].items())
        for i, (name, fact) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            lines.append(f"{json.dumps(name)}:{json.dumps(fact, sort_keys=True, separators=(',', ':'))}{comma}")
        lines.append("}}" if last else '},"ops":{')
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Regenerate the shipped table, or with `--check` report whether it is up to date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped table; write nothing")
    parser.add_argument("--output", type=Path, default=TABLE)
    options = parser.parse_args(argv)
    text = dump(generate())
    if options.check:
        same = options.output.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{options.output} is stale: run tools/generate_torch_facts.py")
        return 0 if same else 1
    options.output.write_text(text, encoding="utf-8")
    table = json.loads(text)
    print(f"{len(table['ops'])} ops written to {options.output}; skipped: {table['skipped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
