"""GG001: the same graph is backward-ed again after a backward freed it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Diagnostic, Edit
from gradguard.rules import Rule, carrier_name, conflict_related, freed_row


class RepeatedBackward(Rule):
    """A loss whose graph was freed by an earlier backward is backward-ed again."""

    code = "GG001"

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for conflict in facts.conflicts:
            if conflict.cause is not Cause.SAME_ROOT:
                continue
            edits, title = _fix(facts, conflict)
            yield self.report(facts, conflict.failing.node, related=conflict_related(facts, conflict),
                              edits=edits, fix_title=title, root=carrier_name(conflict),
                              line=freed_row(facts, conflict))


def _simple_definitions(conflict: Conflict) -> list[cst.SimpleStatementLine]:
    return [d for d in conflict.root_definitions if isinstance(d, cst.SimpleStatementLine)
            and len(d.body) == 1 and isinstance(d.body[0], (cst.Assign, cst.AnnAssign))]


def _fix(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    failing = conflict.failing.statement
    if failing is None:
        return [], None
    definitions = sorted(_simple_definitions(conflict), key=lambda d: facts.span(d).start)
    same_call = conflict.failing.node is conflict.freed_by.node
    function = _enclosing_function(facts, failing)
    if definitions and function is not None and not _inside(facts, definitions[-1], function) \
            and function.name.value != "__init__" and not same_call:
        # An optimizer closure (LBFGS) re-evaluated with a loss computed outside it.
        moved = definitions[-1]
        return [codemods.remove_statement(facts, moved),
                codemods.insert_before(facts, failing, codemods.statement_text(facts, moved))], \
            "Compute `{root}` inside the closure, before its backward"
    if definitions and (same_call or conflict.stepped):
        lines = [line for d in definitions for line in codemods.statement_text(facts, d)]
        return [codemods.insert_before(facts, failing, lines)], \
            "Recompute `{root}` with a new forward pass before this backward"
    if not same_call and _is_expression_statement(failing):
        return [codemods.remove_statement(facts, failing)], "Remove the repeated backward call"
    return [], None


def _is_expression_statement(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr)


def _enclosing_function(facts: FileFacts, node: cst.CSTNode) -> cst.FunctionDef | None:
    current = facts.parent(node)
    while current is not None and not isinstance(current, cst.FunctionDef):
        current = facts.parent(current)
    return current


def _inside(facts: FileFacts, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    current: cst.CSTNode | None = node
    while current is not None:
        if current is container:
            return True
        current = facts.parent(current)
    return False
