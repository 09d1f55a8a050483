"""The shape of one API fact: typed data that says what a call does to autograd graphs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Receiver(Enum):
    """What a method is called on (None on a fact means a callable named by its qualified name)."""

    TENSOR = "tensor"
    MODULE = "module"
    OPTIMIZER = "optimizer"
    DISTRIBUTION = "distribution"
    SCALER = "scaler"
    ACCELERATOR = "accelerator"
    ENGINE = "engine"
    LIGHTNING = "lightning"
    CONTAINER = "container"


class Returns(Enum):
    """What a call hands back, as far as graphs go."""

    FRESH = "fresh"  # a new tensor with no graph: a leaf that requires grad when `requires_grad=True`
    LEAF = "leaf"  # a leaf that requires grad (a Parameter)
    DERIVED = "derived"  # a tensor whose graph joins the graphs of the inputs
    VIEW = "view"  # derived, and sharing the input's storage
    CUT = "cut"  # nothing of the inputs' graph: a detached tensor, an integer or bool tensor
    VALUE = "value"  # a Python value (int, float, bool, list, size)
    RECEIVER = "receiver"  # the receiver itself (in-place ops, `module.to`)
    ARGUMENT = "argument"  # the first argument, unchanged (wrappers, `accelerator.prepare`)
    ARGUMENTS = "arguments"  # the arguments handed back, one result each (`prepare(a, b)`)
    COPY = "copy"  # a new object like the first argument (`copy.deepcopy(model)`: parameters of its own)
    MODULE = "module"
    OPTIMIZER = "optimizer"
    DISTRIBUTION = "distribution"
    DATA = "data"  # batches, datasets, loaders, iterators over them
    PARAMETERS = "parameters"  # a module's parameters: leaves that require grad (`parameters()`)
    BUFFERS = "buffers"  # a module's buffers: tensors without grad
    ITEM = "item"  # one of the items the receiver holds (`list.pop`, `dict.get`)
    CONTEXT = "context"  # a context manager (see `grad_mode`)
    FUNCTION = "function"  # a callable (a transform such as `torch.func.grad`, `functools.partial`)
    # An object of a library class whose methods have facts of their own, named `Class.method`
    # (`random.Random(seed).sample`): the class is the fact's `instance`, else its own name.
    OBJECT = "object"
    # A reference to the first argument: calling it gives that argument back (`weakref.ref(m)()`).
    REFERENCE = "reference"
    NONE = "none"
    UNKNOWN = "unknown"


class Role(Enum):
    """Which part of a call a fact speaks of."""

    RECEIVER = "receiver"
    ARGUMENT = "argument"  # the first positional argument
    ARGUMENTS = "arguments"  # every argument
    LAST = "last"  # the last positional argument (`insert(i, x)`, `setdefault(key, value)`)
    ITEMS = "items"  # the items of the first argument (`extend`)
    RESULT = "result"


class GradMode(Enum):
    """How a context manager or decorator changes graph building in its block."""

    OFF = "off"
    ON = "on"
    SET = "set"  # on or off after its first argument
    INFERENCE = "inference"


class Backward(Enum):
    """Whether a call runs a backward pass."""

    BACKWARD = "backward"  # frees the graph behind its root unless `retain_graph=True`
    GRAD = "grad"  # `torch.autograd.grad`: the same, returning gradients


class Cache(Enum):
    """What a call or class memoises across calls."""

    RESULT = "result"  # results by argument (`functools.lru_cache`)
    ATTRIBUTES = "attributes"  # named attributes computed once (`lazy_property`)
    BLOCK = "block"  # parametrized weights, for the length of a `with` block
    FORWARD = "forward"  # an attribute recomputed only by the module's forward (legacy weight_norm)


class When(Enum):
    """When a callback runs."""

    NOW = "now"  # during the call
    FORWARD = "forward"  # at each forward of the module (forward hooks)
    BACKWARD = "backward"  # during the backward pass (gradient hooks)
    RECOMPUTE = "recompute"  # again during the backward pass (recomputation by checkpoint)


class Computes(Enum):
    """How an attribute a call makes computed from parameters is computed from then on."""

    READ = "read"  # again on each read (parametrizations)
    FORWARD = "forward"  # once at the call, then by each forward (the legacy weight_norm hooks)
    # Only by each forward; before the first, a copy without graph (the legacy spectral_norm hooks).
    AFTER_FORWARD = "after-forward"
    REMOVED = "removed"  # no more: a plain parameter again


class Collects(Enum):
    """What a builtin makes of the items of its arguments."""

    LIST = "list"  # a list of the items of its argument
    TUPLE = "tuple"  # a tuple of them
    ZIP = "zip"  # tuples of the items of each argument
    ENUMERATE = "enumerate"  # an index and an item
    ITEMS = "items"  # items of its arguments, in a container of its own
    DICT = "dict"  # as ITEMS; given keyword arguments only, a dict of them by their names


@dataclass(frozen=True)
class Callback:
    """A call that calls one of its arguments back: which, how often, and with what."""

    argument: int | str  # position, or keyword name
    keyword: str | None = None  # with a position: the keyword it may be passed by instead
    times: int = 1  # how many times one call calls it (LBFGS evaluates its closure repeatedly)
    when: When = When.NOW
    passes: tuple[str, ...] = ()  # what it is called with, in order (`module`, `input`, `output`)


@dataclass(frozen=True)
class Writes:
    """A tensor a call writes in place besides its result: graphs that kept it for their backward
    fail once it has changed ("modified by an inplace operation")."""

    # The argument written (position, or keyword name); for a module class, the parameter its
    # forward writes (`weight`).
    target: int | str
    keyword: str | None = None  # with a position: the keyword it may be passed by instead
    # Only when this keyword argument is given, and not None: of the call, or of the module's
    # construction (`nn.Embedding(n, d, max_norm=1.0)`).
    when: str | None = None


@dataclass(frozen=True)
class BaseClass:
    """A framework base class whose machinery calls methods that user subclasses override."""

    backward_on: tuple[str, ...] = ()  # methods whose returned loss the framework backward()s
    manual_flag: str | None = None  # attribute that, set False, hands backward to the user
    graph_free: tuple[str, ...] = ()  # methods that run without building a graph (autograd.Function)
    # Methods of the class itself whose result carries the graphs of their arguments through one new
    # node (`autograd.Function.apply`: the subclass's forward runs graph-free, its backward is that node).
    joins: tuple[str, ...] = ()
    loss_keys: tuple[str, ...] = ()  # keys of a returned dict that hold the loss backward() runs on
    framework: str = ""  # how messages name what runs that backward ("Lightning")


@dataclass(frozen=True)
class Fact:
    """What gradguard knows about one callable, class or method.

    `name` is a qualified name (`torch.zeros`, `torch.nn.LSTM`), or a method name when `receiver`
    says what the method is called on. Fields left at their defaults say nothing.
    """

    name: str
    receiver: Receiver | None = None
    returns: Returns = Returns.UNKNOWN
    saves: bool | None = None  # its backward node keeps saved tensors: a second backward raises
    saves_result: bool = False  # the node keeps its own output (`relu`, `sigmoid`, `softmax`, `exp`)
    keeps_input: bool | None = None  # a module's nodes keep its input itself (None: not known)
    inplace_position: int | None = None  # a module class built with `inplace=True` (this position) writes its input
    inplace_option: bool = False  # a function given `inplace=True` writes its first argument (`F.relu`)
    inplace: bool = False
    keeps_history: bool | None = None  # in-place: the receiver's old graph stays behind the new node
    # The result is the receiver's storage under another name, with its version counter (`detach()`;
    # every view): an in-place write through either changes what a graph kept of the other.
    shares_storage: bool = False
    cuts: Role | None = None  # whose graph the call drops (`detach_` cuts its receiver)
    caches: Cache | None = None
    cached: tuple[str, ...] = ()  # with Cache.ATTRIBUTES: the attribute names
    stores: Role | None = None  # whose values the call keeps in the receiver or result
    calls: Callback | None = None
    backward: Backward | None = None
    root: Role | None = None  # with `backward`: what the pass starts from
    grad_mode: GradMode | None = None
    requires_grad_kwarg: bool = False  # `requires_grad=True` makes the result a leaf that requires grad
    sets_requires_grad: bool = False  # `requires_grad_(flag)`: freezes (False) or unfreezes
    base: BaseClass | None = None
    state: str | None = None  # with Returns.MODULE: the recurrent state returned ("tuple", "tensor")
    parameterless: bool = False  # with Returns.MODULE: calling it only combines its inputs
    # With Returns.MODULE: called on inputs without a graph, its graph still keeps its parameters (an
    # optimizer's step breaks its backward); False for a Linear (its weight's gradient needs the input
    # only), None when not known.
    keeps_weights: bool | None = None
    # For a module class: the names of the parameters it registers itself (`weight`, `bias`), read as
    # attributes of its instances (`emb.weight`).
    parameters: tuple[str, ...] = ()
    # With Returns.OBJECT: the class of the object made, when the fact names a factory function
    # (`numpy.random.default_rng` makes a `numpy.random.Generator`).
    instance: str | None = None
    container: bool = False  # with Returns.MODULE: holds modules (`ModuleList`)
    # A module's method iterating its submodules: "all" (itself and every module below, `modules()`)
    # or "children" (the modules it holds); on a container class, "items": iterating it gives them.
    submodules: str | None = None
    named: bool = False  # with `submodules`: each module comes with its name (`named_children()`)
    attribute_test: bool = False  # `hasattr(obj, name)`: whether the object has that attribute
    class_test: bool = False  # `isinstance(obj, cls)`: whether the object is of that class
    accessor: bool = False  # a decorator whose method runs when its attribute is read (`property`)
    # A decorator of methods that binds their first parameter to the class (`classmethod`), or to
    # nothing (`staticmethod`: "static").
    binds: str | None = None
    # A base class that gives its subclasses' objects no attribute of note (`object`, `abc.ABC`).
    plain_base: bool = False
    # The call makes an attribute of its module argument (named by its second argument or `name=`,
    # "weight" by default) computed from parameters, and how.
    computes: Computes | None = None
    # A caching decorator: the decorator that does the same without caching ("" for none at all).
    uncached: str | None = None
    evidence: bool = False  # a method only a module has: the receiver is a module
    collects: Collects | None = None  # a builtin that makes a container of what its arguments hold
    iterates: bool = False  # a builtin that iterates its arguments (`zip(loader, noise)`)
    iterator: bool = False  # `iter(xs)`: an iterator over the items of its one argument
    counts: bool = False  # its items are all different (`range(n)`): a new index at each iteration
    proxies_bases: bool = False  # `super()`: the methods of the classes after the calling method's own
    imports_named: bool = False  # `importlib.import_module(name)`: the module its first argument names
    pure: bool = False  # no effect, and a result fixed by its arguments: a condition over it is stable
    registers: Returns | None = None  # `register_buffer(name, t)` (BUFFERS) or a parameter (PARAMETERS)
    clears: bool = False  # empties the container it is called on
    # Returns some items of the container its first argument is, chosen at random (`random.sample`):
    # a container read so is a store the program samples from (a replay buffer).
    picks: bool = False
    # With Returns.ARGUMENTS: the keywords whose arguments come back, in this order, each wrapped
    # (`deepspeed.initialize(model=m, optimizer=o)` gives m's engine, o, ...); none: the positional ones.
    hands_back: tuple[str, ...] = ()
    # A comparison: the argument it compares its input against (a loss's target), by position and
    # keyword; (-1, "") when either side may be that reference (a difference, a ratio).
    reference: tuple[int, str] | None = None
    updates_weights: bool = False  # an optimizer's update: the weights change in place
    writes: Writes | None = None  # a tensor the call (for a module class, its forward) writes in place
    # Draws fresh random numbers: each call gives another result, so running it again does not
    # compute what the first call made (`torch.randn`, `dist.sample()`, `random.choice`).
    draws: bool = False
    # A module's `train(mode=True)` (True: to its first argument, True when none) or `eval()` (False):
    # the module and every module below it are in that mode afterwards (see `nn.TRAINING`).
    training: bool | None = None
    resets_grads: bool = False  # an optimizer's `zero_grad`: with its update, the receiver is an optimizer
    # `parser.add_argument("--loss", choices=[...])`: declares an option, with the values it can take.
    declares_option: bool = False
    # A namespace of parsed options (`args = parser.parse_args()`): each option holds one of its values.
    holds_options: bool = False
    # `type(x)`: the class of its argument (`type(x) == str` of an `x` that is None is false).
    type_of: bool = False
    # With Returns.ITEM, on a mapping: the position of the argument a missing key gives back, None
    # when it is not passed (`d.get(key, default)`).
    missing: int | None = None
    source: str = "hand"  # "hand", "torch" (generated from the installed torch) or "config"

    @property
    def generated(self) -> bool:
        """Generated from the installed torch (not written by hand, nor declared by a project)."""
        return self.source == "torch"

    @property
    def key(self) -> tuple[str, Receiver | None]:
        """How the lookup finds this fact."""
        return (self.name, self.receiver)


@dataclass(frozen=True)
class Family:
    """A family of classes under one qualified prefix (`torch.nn.`): a class of it without a fact of
    its own is still known by what its family makes."""

    prefix: str
    returns: Returns


def facts(names: Iterable[str], receiver: Receiver | None = None, **fields: Any) -> tuple[Fact, ...]:
    """The same fact for each of several names."""
    return tuple(Fact(name, receiver, **fields) for name in names)


def prefixed(prefix: str, names: Iterable[str], **fields: Any) -> tuple[Fact, ...]:
    """The same fact for `prefix + name` for each name: `prefixed("torch.", ["zeros"], ...)`."""
    return tuple(Fact(prefix + name, None, **fields) for name in names)
