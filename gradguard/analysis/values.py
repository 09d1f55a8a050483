"""Abstract values and program states of the dataflow model.

A value records which *graph nodes* it was computed from. A graph node stands for the autograd
nodes one evaluation of one expression created (a call, an operator), named by the expression's
site and a generation: the latest evaluation of a site is "current", every earlier one is folded into
"old" (the recency abstraction). So the second iteration of a loop sees what the first left behind
as old nodes, and a backward that frees the first iteration's graph does not free the second's.

Values are compared by identity: two holders that share one value object alias the same tensor,
which is how an in-place `detach_()` reaches every name of the tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, auto
from functools import lru_cache
from typing import Any

import libcst as cst

from gradguard.analysis import api
from gradguard.analysis.api import Backward, Computes


class Kind(Enum):
    """What kind of Python object a value stands for, as far as the model needs to know."""

    UNKNOWN = auto()
    TENSOR = auto()
    TUPLE = auto()
    LIST = auto()
    DICT = auto()
    MODULE = auto()  # a torch.nn module from a library, or an opaque callable model
    INSTANCE = auto()  # an object of a class defined in the analysed file
    FUNCTION = auto()
    CLASS = auto()
    OPTIMIZER = auto()
    NONE = auto()
    SCALAR = auto()
    DATA = auto()  # an iterable of fresh data (a DataLoader, a range)


# In `Value.writes`: the module writes its input in place (no attribute is so named).
WRITES_INPUT = "<input>"

# Generations kept apart per site: the current evaluation, the previous ones, and a summary of
# all older ones (the last generation). More than a loop's analysis passes, so that instances from
# before a loop are not merged with the loop's own.
GENERATIONS = 6


def node_id(site: int, generation: int = 0) -> int:
    """The id of a site's node of one generation."""
    return site * GENERATIONS + generation


def generation_of(node: int) -> int:
    """0 for the current evaluation of a site, more for earlier ones."""
    return node % GENERATIONS


def site_of(node: int) -> int:
    """The site id of a node id."""
    return node // GENERATIONS


def shifted(node: int, site: int) -> int:
    """A node id after `site` was evaluated again (older by one generation, the last one stays)."""
    if node // GENERATIONS != site or node % GENERATIONS == GENERATIONS - 1:
        return node
    return node + 1


def old(node: int) -> int:
    """The id one generation older than `node` (used to match values across a re-evaluation)."""
    return node + 1 if node % GENERATIONS < GENERATIONS - 1 else node


@dataclass(frozen=True, eq=False)
class Value:
    """An abstract value. `nodes` are all graph nodes behind it; `top` the ones its last operation made."""

    kind: Kind = Kind.UNKNOWN
    nodes: frozenset[int] = frozenset()
    top: frozenset[int] = frozenset()
    grad: bool = False
    elems: tuple[Value, ...] | None = None
    ref: Any = None  # FunctionInfo / ClassInfo / owner label of an optimizer
    qual: str | None = None  # qualified name of a library object (torch.nn.LSTM, torch.optim.LBFGS)
    label: str | None = None  # source text of the callable that produced it ("netG", "self.encoder")
    maybe_none: bool = False
    # For a container literal: the reads of the variables it was built from.
    via: tuple[Any, ...] = ()
    # Taken out of a container that sums up several values: which one is not known.
    element: bool = False
    # For a dict whose keys are string literals (`{"log_pi": a, "v": b}`): the key of each of
    # `elems`, so `d["v"]` is `b` alone.
    keys: tuple[str, ...] | None = None
    # For a list built by adding tuples to it (`data.append((reward, prob))`): for each position of
    # the items, whether any item held a graph there (a reward never does); `()` for a list that
    # holds no item yet, None when the items are not all tuples of one length, or not known.
    item_shape: tuple[bool, ...] | None = None
    # For a list or dict: what every item put in it is, as `item_of` says ("tensor", "tuple" of tensors);
    # "" while it holds no item yet, None when the items differ or are not known.
    items: str | None = None
    # For a module: attributes computed from its parameters (`weight` under a parametrization or
    # the legacy weight_norm): (name, how it is computed, the parametrization module or None, the
    # site of the call that made it computed: what the kept value is keyed by, whatever the path
    # the module is reached by, `self.conv` in its forward or `model.blocks[1].conv` outside).
    weights: tuple[tuple[str, Computes, Any, int], ...] = ()
    # For an instance of a project class: where it was made (the target its constructor's result was
    # assigned to, `PPO.policy_old`), so two objects of one class keep their attributes apart.
    alloc: str | None = None
    # For a method taken from an object without calling it (`self.hook_fn` given as a hook): the
    # object it is bound to.
    bound: Value | None = None
    # For a function defined inside another: what the variables of the functions around it that its
    # code names held when it was defined (a hook made by `self._make_hook(name)` runs later).
    captured: tuple[tuple[str, Value], ...] = ()
    # For a module's parameters (`net.parameters()`, or one of them): the module they belong to, so
    # that an in-place write into one of them reaches that module's later calls.
    parameters_of: Value | None = None
    # For a module: the parameters its forward writes in place (`nn.Embedding(n, d, max_norm=1.0)`
    # renormalises `weight`), and `WRITES_INPUT` when it writes its input (`nn.ReLU(inplace=True)`).
    writes: tuple[str, ...] = ()
    # For a list: what `xs[i] = v` stored at the index the variable `i` held then, with the
    # statements that had bound `i` (`Defs`, compared by identity): while `i` keeps that binding,
    # `xs[i]` reads `v` back (`hidden[s_id] = repackage(hidden[s_id])` detaches that item).
    indexed: tuple[tuple[str, Any, Value], ...] = ()
    # For a library module (a container of library layers): False when, called on inputs without a
    # graph, its graph keeps none of its parameters (`Fact.keeps_weights`); None when not known.
    keeps_weights: bool | None = None
    # For an object of a project class that paths made of different classes (`self.objects` a
    # `Trajectories` on one path, a `States` on another): the objects of the other classes, each
    # without `others` of its own (the value itself stands for the first class's object).
    others: tuple[Value, ...] = ()

    @property
    def carries_graph(self) -> bool:
        """True when a backward through this value would traverse freeable nodes."""
        return bool(self.nodes)


# Keyword arguments of an inlined call that carry a closure's captured variables (never a name).
CAPTURED = "<captured>:"


# The `qual` of an object that is only ever called: it may be a module with parameters, or a
# function that builds data; the graphs its calls make are "unsure" (see `AutogradEvents.reach`).
UNSURE_MODULE = "<called>"

UNKNOWN = Value()
NONE = Value(Kind.NONE, maybe_none=True)
SCALAR = Value(Kind.SCALAR)
DATA = Value(Kind.DATA)
FRESH = Value(Kind.TENSOR)
# Values shared by every holder of "something the model knows nothing more about".
SHARED = (UNKNOWN, NONE, SCALAR, DATA, FRESH)


def requires_grad(value: Value) -> bool:
    """Whether a value makes an op's result require grad: a graph, or a tensor that requires grad (a
    list of parameters handed to a function does not)."""
    return bool(value.nodes) or (value.grad and value.kind not in (Kind.LIST, Kind.TUPLE, Kind.DICT))


def data_with(values: list[Value]) -> Value:
    """A dataset, loader or batch made from `values`: it hands out what it stores as given, so the
    graphs they carry (labels computed by a model that requires grad) ride along with every batch."""
    nodes = frozenset().union(*(v.nodes for v in values)) if values else frozenset()
    if not nodes:
        return DATA
    top = frozenset().union(*(v.top for v in values))
    return Value(Kind.DATA, nodes, top)


def cut(value: Value) -> Value:
    """The value with its graph cut off (`.detach()`, `.item()`, `torch.no_grad()`)."""
    if value.elems is not None:
        return replace(value, nodes=frozenset(), top=frozenset(), grad=False,
                       elems=tuple(cut(e) for e in value.elems), indexed=())
    if not value.nodes and not value.grad:
        return value
    return replace(value, nodes=frozenset(), top=frozenset(), grad=False, indexed=())


# How many classes one object value stands for at most (`Value.others`, the first included).
MAX_CLASSES = 6


def members(value: Value) -> list[Value]:
    """The objects a value may be, one per class (itself alone unless paths made several classes)."""
    if not value.others:
        return [value]
    return [evolve(value, others=()), *value.others]


def join(a: Value | None, b: Value | None) -> Value:
    """The value that may be either `a` or `b`."""
    if a is None:
        return b if b is not None else UNKNOWN
    if b is None or a is b:
        return a
    if a.kind is Kind.NONE and not a.nodes:
        # `None` on one path and an object on the other (`cached = cache.get(net)`): that object
        # or None, with what is known of the object kept (its items, its class).
        return b if b.maybe_none else replace(b, maybe_none=True)
    if b.kind is Kind.NONE and not b.nodes:
        return a if a.maybe_none else replace(a, maybe_none=True)
    if (bare(a) and b.kind in (Kind.MODULE, Kind.INSTANCE)) or (bare(b) and a.kind in (Kind.MODULE, Kind.INSTANCE)):
        # A model on one path, something unseen on another (`net, _ = torch.load(path)` when resuming):
        # taken for the same kind of model, the one the program's own code makes.
        return a if bare(b) else b
    if a.kind is Kind.INSTANCE and b.kind is Kind.INSTANCE and a.ref is not None and b.ref is not None \
            and (a.ref is not b.ref or a.others or b.others):
        return _join_classes(a, b)
    elems = None
    keys = a.keys
    if a.elems is not None and b.elems is not None and len(a.elems) == len(b.elems) and a.keys == b.keys:
        elems = tuple(join(x, y) for x, y in zip(a.elems, b.elems))
    elif a.keys is not None and b.keys is not None and a.elems is not None and b.elems is not None:
        # Dicts whose keys differ by path (`models["decoder"]` in one arm, `models["static_decoder"]`
        # in the other): each entry as any path that has it holds it.
        theirs = dict(zip(b.keys, b.elems))
        entries = {key: join(value, theirs.get(key)) for key, value in zip(a.keys, a.elems)}
        entries.update((key, value) for key, value in theirs.items() if key not in entries)
        keys, elems = tuple(entries), tuple(entries.values())
    kind = a.kind if a.kind == b.kind else (b.kind if a.kind is Kind.NONE else a.kind if b.kind is Kind.NONE else Kind.UNKNOWN)
    return Value(
        kind=kind,
        nodes=a.nodes | b.nodes,
        top=a.top | b.top,
        grad=a.grad or b.grad,
        elems=elems,
        ref=a.ref if a.ref is b.ref or b.ref is None else (a.ref if a.ref is not None else b.ref),
        qual=a.qual if a.qual == b.qual else None,
        label=a.label if a.label == b.label else (a.label or b.label),
        maybe_none=a.maybe_none or b.maybe_none or a.kind is Kind.NONE or b.kind is Kind.NONE,
        keys=keys if elems is not None else None,
        item_shape=join_shapes(a, b),
        items=join_items(a, b),
        weights=a.weights + tuple(w for w in b.weights if w not in a.weights),
        alloc=a.alloc if a.alloc == b.alloc else None,
        bound=a.bound if a.bound is b.bound else None,
        captured=a.captured if a.captured == b.captured else (),
        parameters_of=a.parameters_of if a.parameters_of is b.parameters_of else None,
        writes=a.writes + tuple(w for w in b.writes if w not in a.writes),
        indexed=_join_indexed(a.indexed, b.indexed),
    )


def bare(value: Value) -> bool:
    """Nothing is known of the value: not what it is, nor any graph behind it."""
    return value.kind is Kind.UNKNOWN and not value.nodes and not value.grad and value.ref is None \
        and value.qual is None and value.elems is None


def _join_classes(a: Value, b: Value) -> Value:
    """An object of one of several project classes: each class's object joined with the same
    class's on the other path, the first class's standing for the value."""
    merged: list[Value] = []
    for member in (*members(a), *members(b)):
        index = next((i for i, known in enumerate(merged) if known.ref is member.ref), None)
        if index is None:
            if len(merged) < MAX_CLASSES:
                merged.append(member)
        else:
            merged[index] = join(merged[index], member)
    first = merged[0]
    if len(merged) == 1:
        return first
    maybe_none = any(m.maybe_none for m in merged)
    return evolve(first, others=tuple(merged[1:]), maybe_none=maybe_none,
                  nodes=frozenset().union(*(m.nodes for m in merged)),
                  top=frozenset().union(*(m.top for m in merged)), grad=any(m.grad for m in merged))


def _join_indexed(a: tuple[tuple[str, Any, Value], ...],
                  b: tuple[tuple[str, Any, Value], ...]) -> tuple[tuple[str, Any, Value], ...]:
    """The items both paths know at the same index binding: what either stored there."""
    if a is b or not a or not b:
        return a if a is b else ()
    joined: list[tuple[str, Any, Value]] = []
    for name, defs, item in a:
        for other_name, other_defs, other_item in b:
            if name == other_name and defs is other_defs:
                joined.append((name, defs, item if item is other_item else join(item, other_item)))
                break
    return tuple(joined)


def item_shape_of(value: Value) -> tuple[bool, ...] | None:
    """Which positions of an item tuple hold a graph; None for an item that is not a tuple."""
    if value.kind is not Kind.TUPLE or value.elems is None:
        return None
    return tuple(bool(e.nodes or e.grad) for e in value.elems)


def add_item_shape(container: Value, item: Value) -> tuple[bool, ...] | None:
    """The item shape of a list once `item` is added to it: `()` while it holds no item, None once
    an item is not a tuple of the same length as the others (or the list's items are unknown)."""
    shape = item_shape_of(item)
    if container.item_shape is None or shape is None:
        return None
    if container.item_shape == ():
        return shape
    if len(container.item_shape) != len(shape):
        return None
    return tuple(x or y for x, y in zip(container.item_shape, shape, strict=True))


# Joins the owners of an optimizer over several modules' parameters (no dotted or indexed name holds it).
_GROUP = " + "


def owner_group(owners: list[str]) -> str:
    """The owner of an optimizer of these modules' parameters, as one name (`owners_in` splits it)."""
    return _GROUP.join(dict.fromkeys(owners))


def owners_in(owner: str) -> tuple[str, ...]:
    """The modules an optimizer owner names: itself, or each of a group."""
    return tuple(owner.split(_GROUP))


def made_by(value: Value, label: str) -> Value:
    """What a module's forward returned, named as made by the call `label` (`self.vae`), parts of
    a returned tuple too (`recon, mu, logvar = self.vae(x)`): inside the forward they were named by
    its own submodules (`self.dec`), which say nothing of whose optimizer updates them."""
    elems = value.elems
    if value.kind is Kind.TUPLE and elems:
        elems = tuple(made_by(e, label) if e.nodes else e for e in elems)
    return replace(value, label=label, elems=elems)


def item_of(value: Value) -> str | None:
    """What an item put in a list is, when a fix may rely on it: "tensor", "tuple" (of tensors
    only: an LSTM layer's `(h, c)`), None for anything else."""
    if value.kind is Kind.TENSOR:
        return "tensor"
    if value.kind is Kind.TUPLE and value.elems and all(e.kind is Kind.TENSOR for e in value.elems):
        return "tuple"
    return None


def add_item(items: str | None, item: Value) -> str | None:
    """`items` of a list once `item` is added to it."""
    added = item_of(item)
    if items is None or added is None:
        return None
    return added if items in ("", added) else None


def join_items(a: Value, b: Value) -> str | None:
    """`items` of a list that may be `a` or `b` (a None on one path says nothing of the items)."""
    if b.kind is Kind.NONE or b.items == "":
        return a.items if a.kind is not Kind.NONE else b.items
    if a.kind is Kind.NONE or a.items == "":
        return b.items
    return a.items if a.items == b.items else None


def join_shapes(a: Value, b: Value) -> tuple[bool, ...] | None:
    """The item shape of a list that may be `a` or `b`."""
    if a.item_shape == ():
        return b.item_shape
    if b.item_shape == ():
        return a.item_shape
    if a.item_shape is None or b.item_shape is None or len(a.item_shape) != len(b.item_shape):
        return None
    return tuple(x or y for x, y in zip(a.item_shape, b.item_shape, strict=True))


def same(a: Value | None, b: Value | None) -> bool:
    """Whether two values carry the same facts (used to detect a loop's fixed point)."""
    if a is b:
        return True
    if a is None or b is None:
        return False
    if a.nodes != b.nodes or a.grad != b.grad or a.kind != b.kind or a.maybe_none != b.maybe_none \
            or a.alloc != b.alloc:
        return False
    if (a.elems is None) != (b.elems is None):
        return False
    if a.item_shape != b.item_shape or a.items != b.items:
        return False
    if a.indexed != b.indexed and not (len(a.indexed) == len(b.indexed) and all(
            x[0] == y[0] and x[1] is y[1] and same(x[2], y[2]) for x, y in zip(a.indexed, b.indexed))):
        return False
    if a.others or b.others:
        if len(a.others) != len(b.others) or a.ref is not b.ref or any(
                x.ref is not y.ref or not same(x, y) for x, y in zip(a.others, b.others)):
            return False
    if a.elems is not None and b.elems is not None:
        return len(a.elems) == len(b.elems) and all(same(x, y) for x, y in zip(a.elems, b.elems))
    return True


def evolve(value: Value, **changes: Any) -> Value:
    """`dataclasses.replace` for the renaming hot paths: a copy with `changes`, without re-running
    the dataclass's `__init__` (a Value has no `__post_init__` and no slots)."""
    new = object.__new__(Value)
    new.__dict__.update(value.__dict__)
    new.__dict__.update(changes)
    return new


@lru_cache(maxsize=4096)
def site_nodes(site: int) -> frozenset[int]:
    """Every node id of `site`, its summary generation included."""
    base = site * GENERATIONS
    return frozenset(range(base, base + GENERATIONS))


@lru_cache(maxsize=4096)
def moving(site: int) -> frozenset[int]:
    """The node ids of `site` that get older when it is evaluated again (all but the summary)."""
    base = site * GENERATIONS
    return frozenset(range(base, base + GENERATIONS - 1))


def rename(value: Value, site: int) -> Value:
    """Age the nodes of `site` by one generation (the site is being evaluated again)."""
    ageing = moving(site)
    if value.nodes.isdisjoint(ageing):
        return value
    mine = value.nodes & ageing
    # Only the site's own nodes move (set operations: values of real models hold hundreds of nodes).
    nodes = (value.nodes - mine) | frozenset(n + 1 for n in mine)
    top_mine = value.top & ageing
    top = (value.top - top_mine) | frozenset(n + 1 for n in top_mine) if top_mine else value.top
    elems = tuple(rename(e, site) for e in value.elems) if value.elems is not None else None
    if value.indexed or value.others:
        indexed = tuple((name, defs, rename(item, site)) for name, defs, item in value.indexed)
        return evolve(value, nodes=nodes, top=top, elems=elems, indexed=indexed,
                      others=tuple(rename(other, site) for other in value.others))
    return evolve(value, nodes=nodes, top=top, elems=elems)


def rename_by(value: Value, shifts: dict[int, int]) -> Value:
    """Age the nodes of each site of `shifts` by as many generations as it says (`rename` as
    often, for several sites at once)."""
    if len(shifts) == 1:
        (site, count), = shifts.items()
        for _ in range(count):
            value = rename(value, site)
        return value
    ageing = _ageing(shifts)
    if value.nodes.isdisjoint(ageing):
        return value
    mine = value.nodes & ageing
    nodes = (value.nodes - mine) | frozenset(_aged(n, shifts) for n in mine)
    top_mine = value.top & ageing
    top = (value.top - top_mine) | frozenset(_aged(n, shifts) for n in top_mine) if top_mine else value.top
    elems = tuple(rename_by(e, shifts) for e in value.elems) if value.elems is not None else None
    if value.indexed or value.others:
        indexed = tuple((name, defs, rename_by(item, shifts)) for name, defs, item in value.indexed)
        return evolve(value, nodes=nodes, top=top, elems=elems, indexed=indexed,
                      others=tuple(rename_by(other, shifts) for other in value.others))
    return evolve(value, nodes=nodes, top=top, elems=elems)


def _ageing(shifts: dict[int, int]) -> frozenset[int]:
    return frozenset().union(*(moving(site) for site in shifts))


def _aged(node: int, shifts: dict[int, int]) -> int:
    return min(node + shifts[node // GENERATIONS], node - node % GENERATIONS + GENERATIONS - 1)


@dataclass(frozen=True)
class Freed:
    """Why a node is freed: the call that freed it, and the optimizers stepped since."""

    call: CallInfo
    stepped: frozenset[str] = frozenset()
    # Weak: an old-generation node that also stands for an instance that was never freed.
    weak: bool = False
    # The branches the freeing call ran under: (the `if` statement, the arm taken).
    conditions: tuple[tuple[cst.CSTNode, bool], ...] = ()
    # The condition atoms its path assumed (`State.partition_key`), and whether it is weak because
    # an older generation was folded in (rather than because only some paths freed it).
    assumed: frozenset[tuple[str, bool]] = frozenset()
    aged: bool = False
    # Not freed but changed: an optimizer step (`call`) updated in place the parameters this node
    # saved, so a backward through it fails with "modified by an inplace operation".
    by_step: bool = False
    # Parameters' gradients were read since (`p.grad` copied, summed, inspected): the program wants
    # what this backward computed before the next one (a gradient-norm probe, per-class saliency).
    grads_read: bool = False
    # With `by_step`, changed by an in-place write rather than an optimizer: the tensor written.
    written: Holder | None = None


class CallKind(Enum):
    """What a call site of `CallInfo` does to graphs."""

    BACKWARD = auto()  # a backward pass from its roots: frees the graph unless told to retain it
    GRAD = auto()  # a backward pass that returns the gradients (`torch.autograd.grad`)
    STEP = auto()  # an optimizer's update: the weights change in place
    FRAMEWORK = auto()  # a training framework's own backward over what a method returns


@dataclass(frozen=True, eq=False)
class CallInfo:
    """One backward-like call site: `loss.backward()`, `torch.autograd.grad(...)`, a framework's call."""

    node: cst.CSTNode  # the Call (or, for an implicit framework backward, the returning statement)
    statement: cst.CSTNode | None
    kind: CallKind
    root_text: str
    root_node: cst.CSTNode | None
    retain: bool
    create_graph: bool
    loops: tuple[cst.CSTNode, ...]  # the loops around the call, outermost first, across inlined calls
    function: str  # qualified name of the function it is in, "<module>" at top level
    # For a call in another module's code: the call of the linted file that ran it, and its statement.
    local_call: tuple[cst.CSTNode, cst.CSTNode | None] | None = None

    @property
    def shown(self) -> str:
        """How messages name this kind of call: `backward`, `torch.autograd.grad`."""
        return api.backward_name(Backward.GRAD if self.kind is CallKind.GRAD else Backward.BACKWARD)


@dataclass(frozen=True)
class Holder:
    """A named place that holds a value: a local or global variable, or an attribute of an object."""

    kind: str  # "variable", "attribute"
    key: tuple[str, ...]  # ("name",) or (class key, attr)
    text: str  # as the user wrote it: "hidden", "self.h"


# The heap attribute of a module's parameters: the graph in-place writes outside no_grad gave them.
PARAMETERS = "<parameters>"
# The heap attribute under which ops that kept one of a module's own parameters, read directly, are
# noted (`Evaluator.parameter_read`).
PARAMETER_READ = "<parameter read>"


def of_parameters(holder: Holder) -> bool:
    """Whether a holder is a module's parameters (written in place): no statement can detach them."""
    return PARAMETERS in holder.key


@dataclass(frozen=True, eq=False)
class Read:
    """A read of a holder whose value flowed into a newly created node."""

    holder: Holder
    nodes: frozenset[int]
    expr: cst.CSTNode
    statement: cst.CSTNode | None
    consumer: str | None  # label of the callable the value was passed to ("netD"), if any
    top: frozenset[int]  # the nodes the read value's own last operation made
    defs: frozenset[cst.CSTNode]  # the statements that had assigned the holder
    chain: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]  # (block owner, statement) around the read
    function: Any  # the FunctionInfo the read happened in, None at module level
    shape: str = "tensor"  # "tensor", "tuple" or "container": what the holder held
    maybe_none: bool = False
    # For a parameter read inside an inlined call: the caller's read of the argument.
    outer: Read | None = None
    producer: str | None = None  # label of the module call that made the value read ("netG")
    items: str | None = None  # for a list or dict: what its items are (`Value.items`)
    container: str | None = None  # "list" or "dict" for a value of one of those kinds


@dataclass
class Origin:
    """How one node came to be: the reads that fed it and the direct parent nodes."""

    reads: list[Read] = field(default_factory=list)
    parents: frozenset[int] = frozenset()
    loops: tuple[cst.CSTNode, ...] = ()
    expr: cst.CSTNode | None = None
    # How many times each site behind `parents` and the reads had been evaluated when this node
    # was made: node ids recorded then are translated to today's generations with it.
    stamps: dict[int, int] = field(default_factory=dict)
    # For a module call: the module called and the objects whose methods ran it (whose
    # parameters the node saved; `AutogradEvents.optimizer_step`).
    owners: frozenset[str] = frozenset()

    def now(self, nodes: frozenset[int], epochs: dict[int, int]) -> frozenset[int]:
        """`nodes` as recorded here, renamed to the generations they have in a state with `epochs`."""
        return translate(nodes, self.stamps, epochs)


def stamps_of(nodes: frozenset[int], epochs: dict[int, int]) -> dict[int, int]:
    """How many times the sites of `nodes` had been evaluated: what `translate` needs later."""
    return {node // GENERATIONS: epochs.get(node // GENERATIONS, 0) for node in nodes}


def translate(nodes: frozenset[int], stamps: dict[int, int], epochs: dict[int, int]) -> frozenset[int]:
    """Node ids recorded when the sites had been evaluated `stamps` times, renamed to the
    generations they have in a state where they have been evaluated `epochs` times."""
    result = set()
    for node in nodes:
        site, generation = divmod(node, GENERATIONS)
        then = stamps.get(site)
        if then is not None:
            generation = min(generation + max(epochs.get(site, then) - then, 0), GENERATIONS - 1)
        result.add(site * GENERATIONS + generation)
    return frozenset(result)


def fold_generations(value: Value, sites: frozenset[int]) -> Value:
    """`value` with every older generation of `sites` folded into the summary generation."""
    if not value.nodes and value.elems is None:
        return value
    older = _older_generations(sites)
    mine = value.nodes & older
    if not mine and value.elems is None:
        return value
    # Set operations, not a loop over the nodes: values of real models hold hundreds of them.
    nodes = (value.nodes - mine) | frozenset(_folded(n, sites) for n in mine) if mine else value.nodes
    top_mine = value.top & older
    top = (value.top - top_mine) | frozenset(_folded(n, sites) for n in top_mine) if top_mine else value.top
    elems = tuple(fold_generations(e, sites) for e in value.elems) if value.elems is not None else None
    if nodes == value.nodes and top == value.top and (elems is None or all(
            a is b for a, b in zip(elems, value.elems or ()))):
        return value
    if value.indexed or value.others:
        indexed = tuple((name, defs, fold_generations(item, sites)) for name, defs, item in value.indexed)
        return evolve(value, nodes=nodes, top=top, elems=elems, indexed=indexed,
                      others=tuple(fold_generations(other, sites) for other in value.others))
    return evolve(value, nodes=nodes, top=top, elems=elems)


@lru_cache(maxsize=256)
def _older_generations(sites: frozenset[int]) -> frozenset[int]:
    """The node ids `fold_generations` moves: every generation of `sites` but the newest and the summary."""
    return frozenset(site * GENERATIONS + generation for site in sites for generation in range(1, GENERATIONS - 1))


def _folded(node: int, sites: frozenset[int]) -> int:
    site, generation = divmod(node, GENERATIONS)
    if site in sites and 0 < generation < GENERATIONS - 1:
        return site * GENERATIONS + GENERATIONS - 1
    return node


# Loops and comprehensions over this many known objects or fewer run once per object (a model's
# `modules()` of a few dozen layers) instead of to a fixed point over their join.
MAX_UNROLLED = 32


def an_object(value: Value) -> bool:
    """A module or project object, a (name, object) pair of `named_children()`, or a callable
    bound to one (`m.reset`, `weakref.ref(m)`: each item calls into its own object)."""
    if value.kind is Kind.TUPLE and value.elems and len(value.elems) == 2:
        value = value.elems[1]
    if value.kind is Kind.FUNCTION and isinstance(value.bound, Value):
        value = value.bound
    return value.kind in (Kind.INSTANCE, Kind.MODULE)


def known_objects(value: Value) -> tuple[Value, ...] | None:
    """The objects a container holds, in order, when it is a short known sequence of objects; of
    library modules, which keep no state the analysis follows, one of each class."""
    elements = value.elems if value.kind in (Kind.TUPLE, Kind.LIST) else None
    if not elements or len(elements) > 4 * MAX_UNROLLED or not all(an_object(e) for e in elements):
        return None
    kept: list[Value] = []
    library: set[str | None] = set()
    for element in elements:
        if element.kind is Kind.MODULE and not isinstance(element.ref, Value):
            if element.qual in library:
                continue
            library.add(element.qual)
        kept.append(element)
    return tuple(kept) if len(kept) <= MAX_UNROLLED else None


def opaque_object(value: Value) -> bool:
    """An object whose class the analysis does not see (unknown, or a library module), not a tensor."""
    return value.kind in (Kind.UNKNOWN, Kind.MODULE) and not value.nodes and not value.grad
