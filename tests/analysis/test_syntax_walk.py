"""`parse.walk` stands in for libcst's `node.visit(visitor)` in the analysis: the same hooks called on the
same nodes in the same order (layout aside), on real code of every shape the fixtures and gradguard's own
sources hold, and `nodes_of` in source order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

import gradguard
from gradguard.parse import _LAYOUT, newlines_in, nodes_of, walk

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [*(ROOT / "fixtures").rglob("*.py"), *Path(gradguard.__file__).parent.rglob("*.py")],
    key=str,
)


class Recorder(cst.CSTVisitor):
    """Every visit and leave, in order; it prunes lambdas and private functions (what a visitor's
    False does)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, _LAYOUT):
            self.events.append(("visit", id(node)))
        private = isinstance(node, cst.FunctionDef) and node.name.value.startswith("_")
        return not isinstance(node, cst.Lambda) and not private

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if not isinstance(original_node, _LAYOUT):
            self.events.append(("leave", id(original_node)))


class Hooks(cst.CSTVisitor):
    """A visitor with type hooks only (the walk's fast path), one returning False."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.seen.append(("name", id(node)))

    def visit_Call(self, node: cst.Call) -> None:
        self.seen.append(("call", id(node)))

    def leave_Call(self, original_node: cst.Call) -> None:
        self.seen.append(("left call", id(original_node)))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.seen.append(("lambda", id(node)))
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        self.seen.append(("assign", id(node)))


@pytest.mark.parametrize("path", SOURCES[::7], ids=lambda p: p.name)
def test_walk_calls_the_hooks_libcst_calls_in_its_order(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    for make in (Recorder, Hooks):
        theirs, mine = make(), make()
        module.visit(theirs)
        walk(module, mine)
        assert getattr(mine, "events", None) == getattr(theirs, "events", None)
        assert getattr(mine, "seen", None) == getattr(theirs, "seen", None)


def test_nodes_of_lists_nodes_in_source_order() -> None:
    source = (
        "@decorate(first)\n"
        "def f(a=second):\n"
        "    x = third if fourth else fifth\n"
        "    return {sixth: seventh for eighth in ninth}\n"
    )
    module = cst.parse_module(source)
    names = [name.value for name in nodes_of(module, cst.Name)]
    assert names == ["decorate", "first", "f", "a", "second", "x", "third", "fourth", "fifth",
                     "sixth", "seventh", "eighth", "ninth"]


@pytest.mark.parametrize("path", SOURCES[::11], ids=lambda p: p.name)
def test_newlines_in_counts_what_the_generated_code_holds(path: Path) -> None:
    # The step budget of a statement grows with its lines; generating its code to count them
    # overflows the recursion on an expression nested 2,000 deep (tests/reliability).
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    for statement in nodes_of(module, cst.BaseStatement):
        assert newlines_in(statement) == module.code_for_node(statement).count("\n")


def test_newlines_in_follows_continuations_and_strings() -> None:
    source = 'x = 1 + \\\n    2\ny = """a\nb"""  # c\n\n# d\nz = (3,\n     4)\n'
    module = cst.parse_module(source)
    assert [newlines_in(s) for s in module.body] == [2, 2, 4]
