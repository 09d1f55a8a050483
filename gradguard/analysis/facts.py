"""The facts the analysis hands to rules: conflicts, needless retains, graphs kept alive.

Rules read these and nothing else. Positions are resolved lazily, once per file, and only when
there is something to report (libcst's position metadata costs as much as parsing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.analysis.values import CallInfo, CallKind, Holder, Read  # noqa: F401 - CallKind: rules read it here
from gradguard.model import Note, Span


class Cause(StrEnum):
    """Why a backward reached a graph an earlier call freed."""

    SAME_ROOT = "same-root"  # the very graph was backward-ed before
    SHARED_FORWARD = "shared-forward"  # another loss of the same forward pass
    GAN_REUSE = "gan-reuse"  # a generator's output reused after the discriminator's step
    GRAD_FREED = "grad-freed"  # torch.autograd.grad freed the graph a later pass needs
    LOOP_CARRIED = "loop-carried"  # state carried over from an earlier iteration
    ACCUMULATED = "accumulated"  # summed into an accumulator across iterations
    BUILT_BEFORE_LOOP = "built-before-loop"  # computed once, before the loop or at construction
    MEMOIZED = "memoized"  # cached on first use and reused afterwards
    FRAMEWORK = "framework"  # the training framework calls backward again
    STEPPED = "stepped"  # an optimizer step changed parameters a retained graph saved


@dataclass(frozen=True)
class Carrier:
    """The variable or attribute that brought the stale graph into the failing call."""

    holder: Holder
    # Statements that (re)assigned the carrier with the stale graph, in source order.
    assignments: tuple[cst.CSTNode, ...]
    # Reads of the carrier that fed the failing call's graph, and those that fed the freeing call's.
    reads: tuple[Read, ...]
    first_reads: tuple[Read, ...]
    is_tuple: bool = False
    is_container: bool = False
    maybe_none: bool = False
    self_update: bool = False  # its new value is computed from its old one (h = f(h), acc += x)
    augmented: bool = False  # updated with `+=` / `x = x + ...`
    is_data: bool = False  # a dataset, loader or batch (what it holds carries the graph)
    # Made by code the analysis did not see (an unknown module's output): a tensor or a tuple of them.
    shape_unknown: bool = False
    # A container the program reads by picking items at random (`random.sample(self.buffer, n)`): a
    # store of data it keeps on purpose (a replay buffer), not a collection to empty.
    sampled: bool = False
    # For a container: what every item the analysis saw put in it is ("tensor", or "tuple" of
    # tensors: one LSTM layer's `(h, c)`); None when they differ or are not known.
    items: str | None = None
    # For a container: "list" or "dict", what every path assigned to it; None when not known.
    container: str | None = None
    # Where the carrier (or a value computed from it: pix2pix's `torch.cat((real_A, fake_B), 1)`)
    # went into a module an optimizer then stepped, in the freeing call's graph: in a GAN, where the
    # fake batch entered the discriminator.
    fed: tuple[Read, ...] = ()
    # Made by modules that only the optimizers stepped between the two calls update, none stepped
    # after the failing call (an actor-critic's value, a discriminator's features used as a target):
    # what the later loss would send into them no optimizer uses, so the later loss can read it detached.
    settled: bool = False
    # Made only by calls of modules (and operations in their methods) that none of the optimizers
    # stepped between the two calls updates (a teacher, a frozen encoder): no gradient into what made
    # it is wanted (`causes.Evidence.frozen_source`).
    untrained: bool = False
    # Read by the failing loss only as a reference it compares against: a loss's target, or one side of
    # a difference or ratio with a fresh output of the module that made it (`causes.Evidence.reference_only`);
    # None when it meets the loss only at such comparisons but as which of their arguments is not known.
    reference: bool | None = False
    # What one of its assignments wrote in this very iteration reaches the failing loss (`buf[t] =
    # layer(x[t])`, then `buf.sum()`): the stored values are what trains, not a bank read as constants.
    written_into_loss: bool = False


@dataclass(frozen=True)
class Conflict:
    """A backward or grad call that reaches graph nodes an earlier call freed."""

    failing: CallInfo
    freed_by: CallInfo
    cause: Cause
    carrier: Carrier | None
    stepped: frozenset[str]  # optimizers stepped between the two calls
    # The loop whose iterations carry the stale graph, if any.
    loop: cst.CSTNode | None = None
    # The statement of the enclosing block (function body or loop body) where state is carried in.
    entry_statement: cst.CSTNode | None = None
    # Statements that computed the failing call's root (for "recompute" fixes), in order.
    root_definitions: tuple[cst.CSTNode, ...] = ()
    # For a function (LBFGS closure, forward) in which the failing call sits: its definition.
    function: cst.FunctionDef | None = None
    # Whether the freeing call's optimizer step updated the module that consumed the carrier (GANs).
    consumer_stepped: bool = False
    # The branch the freeing call ran under and the failing call did not: (`if` statement, arm).
    condition: tuple[cst.CSTNode, bool] | None = None
    # The earlier backward whose `retain_graph=True` kept the failing graph alive (STEPPED).
    retained_by: CallInfo | None = None
    # MEMOIZED by caching decorators (`functools.lru_cache`): each, with the decorator that
    # would compute the same on every call ("" for none).
    memoised: tuple[tuple[cst.Decorator, str], ...] = ()
    # When the failing call is in another module's code: that call (the finding is reported at the
    # call of the linted file that ran it, `failing`).
    remote_failing: CallInfo | None = None
    # ... and the carrier as that module's code names it (`carrier` may name the argument passed).
    remote_carrier: Carrier | None = None
    # The failing call retains its graph: it does not fail but goes through the stale graph again
    # each iteration (`retain_graph=True` hides the bug); `freed_by` is that same call.
    masked: bool = False
    # The program read parameters' gradients after the freeing call (in any function it ran), and
    # changed no weights in between.
    grads_read: bool = False
    # With STEPPED, changed by an in-place write of the program (a Polyak blend, a buffer update, an
    # embedding's max_norm lookup) rather than an optimizer's update: the tensor written.
    written: Holder | None = None
    # With STEPPED: another optimizer of the program also trains some of the modules the step changed
    # (a shared encoder that each task's optimizer updates).
    shared_step: bool = False
    # The objects of the program's classes the running functions held at the failing call, as their
    # code names them, with each one's heap owner (`Met.objects`).
    objects: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class NeedlessRetain:
    """A `retain_graph=True` call whose graph no later backward or grad reaches."""

    call: CallInfo
    keyword: cst.Arg | None
    in_loop: bool


@dataclass(frozen=True)
class KeptAlive:
    """A graph tensor stored across iterations (a list or a running sum) that no backward uses."""

    holder: Holder
    statement: cst.CSTNode
    value_expr: cst.CSTNode  # the graph-carrying expression stored (`loss`)
    container: bool  # appended to a list (True) or summed (False)
    loop: cst.CSTNode


@dataclass
class FileFacts:
    """Everything the rules may ask about one file."""

    module: cst.Module = field(repr=False)
    source: str = field(repr=False)
    conflicts: list[Conflict] = field(default_factory=list)
    needless_retains: list[NeedlessRetain] = field(default_factory=list)
    kept_alive: list[KeptAlive] = field(default_factory=list)
    lightning_backward: list[CallInfo] = field(default_factory=list)
    # How messages name a row: "line 12", or for a notebook "cell 3, line 4".
    describe_row: Callable[[int], str] = field(default=lambda row: f"line {row}")
    # The project modules read with this file: (path, content digest).
    dependencies: tuple[tuple[str, str], ...] = ()
    # What the analysis did not follow to the end, in words, at the row where that part starts.
    incomplete: tuple[Note, ...] = ()
    # Rows of this file's backward calls reached with a tensor known to carry no graph.
    graphless_backwards: tuple[int, ...] = ()
    # Where the nodes of project modules other than this file are: node -> (path, span).
    elsewhere: Callable[[cst.CSTNode], tuple[str, Span] | None] = field(default=lambda node: None)
    # The facts of the project module that holds a node of another module (None when none does).
    foreign: Callable[[cst.CSTNode], FileFacts | None] = field(default=lambda node: None)
    # Statements of this file whose run draws fresh random numbers (directly, or in the code of a
    # helper they call): running one again does not recompute what it made.
    draws: frozenset[cst.CSTNode] = field(default=frozenset(), repr=False)
    # Statements of this file that bind an object a call made: a module, an optimizer, a data loader,
    # an instance of the program's classes (`Interpreter.making`).
    makes_objects: frozenset[cst.CSTNode] = field(default=frozenset(), repr=False)
    # For the facts of an imported project module: its absolute path, which its edits carry.
    path: str | None = None
    # How messages name another file of the project (relative to the linted file's folder).
    shown_path: Callable[[str], str] = field(default=lambda path: path)
    _row_index: dict[Callable[[str], bool], list[int]] = field(default_factory=dict, repr=False, compare=False)

    def rows_matching(self, test: Callable[[str], bool]) -> list[int]:
        """The rows whose line passes `test`, ascending; worked out once per test, so that asking
        about the lines between two places costs a look-up, not a scan."""
        rows = self._row_index.get(test)
        if rows is None:
            rows = self._row_index[test] = [row for row, line in enumerate(self.lines, 1) if test(line)]
        return rows

    def is_local(self, node: cst.CSTNode | None) -> bool:
        """Whether a node is in this file (not in a project module it imports)."""
        return node is not None and node in self._positions

    def home(self, node: cst.CSTNode) -> FileFacts:
        """The facts of the file that holds `node`: this one, or an imported project module's, whose
        spans, text and edits (`Edit.path`) are that module's. KeyError when no file known holds it."""
        if self.is_local(node):
            return self
        found = self.foreign(node)
        if found is None:
            raise KeyError(node)
        return found

    def where(self, node: cst.CSTNode) -> str:
        """How a message names the place of a node: "line 12", or "models.py:30" elsewhere."""
        if self.is_local(node):
            return self.describe_row(self.span(node).start.row)
        found = self.elsewhere(node)
        if found is None:
            return "another module"
        path, span = found
        return f"{path}:{span.start.row}"

    @cached_property
    def _parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        from gradguard.parse import parent_map

        return parent_map(self.module)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node that contains `node` (None for the module), in whichever module holds it."""
        found = self._parents.get(node)
        if found is None and self.path is None and node not in self._positions:
            other = self.foreign(node)
            if other is not None:
                return other.parent(node)
        return found

    @cached_property
    def _positions(self) -> dict[cst.CSTNode, object]:
        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        return dict(wrapper.resolve(PositionProvider))

    def span(self, node: cst.CSTNode) -> Span:
        """The source span of a node (1-based rows and columns)."""
        position = self._positions[node]
        start, end = position.start, position.end  # type: ignore[attr-defined]
        return Span.of(start.line, start.column + 1, end.line, end.column + 1)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node."""
        return self.module.code_for_node(node)

    def indent_of(self, statement: cst.CSTNode) -> str:
        """The indentation of the line a statement starts on."""
        row = self.span(statement).start.row
        line = self.lines[row - 1]
        return line[: len(line) - len(line.lstrip(" \t"))]

    @cached_property
    def lines(self) -> list[str]:
        """The source split into lines, without their endings."""
        return self.source.splitlines()

    def newline(self) -> str:
        """The file's line ending."""
        return self.module.default_newline
