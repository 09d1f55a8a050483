"""GG001: the same graph is backward-ed again after a backward freed it."""

from __future__ import annotations

import libcst as cst

from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan, carrier_name


class RepeatedBackward(ConflictRule):
    """A loss whose graph was freed by an earlier backward is backward-ed again."""

    code = "GG001"
    causes = frozenset({Cause.SAME_ROOT})

    def fix(self, facts: FileFacts, conflict: Conflict) -> FixPlan:
        edits, title = _fix(facts, conflict)
        return FixPlan(tuple(edits), title)

    def fields(self, facts: FileFacts, conflict: Conflict) -> dict[str, str]:
        return {**super().fields(facts, conflict), "root": carrier_name(conflict)}


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
    if len(definitions) == 1 and function is not None and not _inside(facts, definitions[0], function) \
            and facts.parent(function) is facts.parent(definitions[0]):
        # An optimizer closure (LBFGS) re-evaluated with a loss computed outside it: the
        # computation moves into the closure (or is repeated there, if it is used elsewhere too).
        chain = codemods.definition_chain(facts, definitions[0])
        lines = [line for d in chain for line in codemods.statement_text(facts, d, comments=True)]
        edits = [codemods.insert_before(facts, failing, lines)]
        if not _used_elsewhere(facts, chain, function):
            edits = [codemods.remove_statement(facts, d, comments=True) for d in chain] + edits
        return edits, "Compute `{root}` inside the closure, before its backward"
    if len(definitions) == 1 and (same_call or conflict.stepped):
        chain = codemods.definition_chain(facts, definitions[0])
        lines = [line for d in chain for line in codemods.statement_text(facts, d)]
        return [codemods.insert_before(facts, failing, lines)], \
            "Recompute `{root}` with a new forward pass before this backward"
    if not same_call and _is_expression_statement(failing):
        return [codemods.remove_statement(facts, failing)], "Remove the repeated backward call"
    return [], None


def _used_elsewhere(facts: FileFacts, chain: list[cst.CSTNode], closure: cst.FunctionDef) -> bool:
    """Whether what the chain assigns is used in its block after it, other than by the closure."""
    block = facts.parent(chain[-1])
    body = list(getattr(block, "body", ()))
    if chain[-1] not in body:
        return True
    names = set().union(*(codemods.assigned_names(d) for d in chain))
    later = [s for s in body[body.index(chain[-1]) + 1:] if s is not closure]
    return any(codemods.reads_name(s, name) for s in later for name in names)


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
