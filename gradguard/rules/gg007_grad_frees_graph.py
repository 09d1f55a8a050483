"""GG007: `torch.autograd.grad` without `retain_graph`/`create_graph` frees a graph used afterwards."""

from __future__ import annotations

import re

import libcst as cst

from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan


class GradFreesGraph(ConflictRule):
    """A backward or grad after `torch.autograd.grad` reaches the part of the graph grad freed."""

    code = "GG007"
    causes = frozenset({Cause.GRAD_FREED})

    def fix(self, facts: FileFacts, conflict: Conflict) -> FixPlan:
        edits, keyword = _fix(facts, conflict)
        return FixPlan(tuple(edits), f"Pass `{keyword}=True` to `torch.autograd.grad`")


def _targets(statement: cst.CSTNode | None) -> list[str]:
    names: list[str] = []
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names.extend(_names(target.target))
    return names


def _names(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for e in node.elements for n in _names(e.value)]
    return []


def _feeds_later_code(facts: FileFacts, conflict: Conflict) -> bool:
    """Whether what grad returned is used between the grad call and the failing call."""
    grad_statement, failing = conflict.freed_by.statement, conflict.failing.statement
    names = _targets(grad_statement)
    if grad_statement is None or failing is None or not names:
        return bool(names)
    start, end = facts.span(grad_statement).end.row, facts.span(failing).start.row
    if end <= start:
        return True
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    for line in facts.lines[start:end]:
        code = line.split("#", 1)[0]
        if pattern.search(code) and not code.lstrip().startswith(("print(", "log")):
            return True
    return False


def _fix(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str]:
    call = conflict.freed_by.node
    keyword = "create_graph" if _feeds_later_code(facts, conflict) else "retain_graph"
    if not isinstance(call, cst.Call):
        return [], keyword
    return [codemods.set_keyword(facts, call, keyword, "True")], keyword
