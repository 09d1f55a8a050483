"""The rules: one module per rule (`ggNNN_<name>.py`), each holding one `Rule` subclass.

Rules never walk the syntax tree themselves. They read the facts the analysis computed once per file
(`gradguard.analysis.facts.FileFacts`) and turn the ones they own into diagnostics with fixes.
The registry builds itself by importing every module of this package.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from gradguard import catalogue
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Applicability, Diagnostic, Edit, Fix, Related


class Rule:
    """Base class of a rule: a code, its document, and `check`, which reports from facts."""

    code: ClassVar[str]

    @property
    def doc(self) -> catalogue.RuleDoc:
        """This rule's document in the catalogue."""
        return catalogue.get(self.code)

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        """Yield this rule's findings for one file."""
        raise NotImplementedError

    def report(self, facts: FileFacts, node: object, *, related: list[Related] | None = None,
               edits: list[Edit] | None = None, applicability: Applicability | None = None,
               fix_title: str | None = None, note: str | None = None, **fields: str) -> Diagnostic:
        """A finding at `node`, worded from the rule's document, with an optional fix."""
        doc = self.doc
        fix = None
        if edits:
            fix = Fix((fix_title or doc.fix_title).format(**fields),
                      applicability or doc.fix_applicability, tuple(edits))
        return Diagnostic(
            code=self.code,
            message=doc.message.format(**fields) + (f" ({note})" if note else ""),
            span=facts.span(node),  # type: ignore[arg-type]
            severity=doc.severity,
            fix=fix,
            related=tuple(related or ()),
        )


@dataclass(frozen=True)
class FixPlan:
    """What a rule proposes for one finding: its edits, and how to title and rate them when that
    differs from the rule's document."""

    edits: tuple[Edit, ...] = ()
    title: str | None = None
    applicability: Applicability | None = None


class ConflictRule(Rule):
    """A rule that reports the conflicts of some causes at the failing call, with a fix."""

    causes: ClassVar[frozenset[Cause]]

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for conflict in facts.conflicts:
            if conflict.cause in self.causes and self.applies(conflict):
                try:
                    plan = self.fix(facts, conflict)
                except KeyError:
                    # The fix would edit code of another module (where the cause is): none here.
                    plan = FixPlan()
                edits = [] if any(_repeats(facts, edit) for edit in plan.edits) else list(plan.edits)
                yield self.report(facts, conflict.failing.node, related=conflict_related(facts, conflict),
                                  edits=edits, fix_title=plan.title, applicability=plan.applicability,
                                  note=condition_note(facts, conflict), **self.fields(facts, conflict))

    def applies(self, conflict: Conflict) -> bool:
        """Whether this rule reports a conflict of one of its causes (all of them by default)."""
        return True

    def fields(self, facts: FileFacts, conflict: Conflict) -> dict[str, str]:
        """The values the document's message and fix title are formatted with."""
        return {"carrier": carrier_name(conflict), "line": freed_row(facts, conflict),
                "root": conflict.failing.root_text, "first": conflict.freed_by.root_text}

    def fix(self, facts: FileFacts, conflict: Conflict) -> FixPlan:
        """The fix for one conflict (none by default)."""
        return FixPlan()


def _repeats(facts: FileFacts, edit: Edit) -> bool:
    """An insertion of lines that already stand right there: the same fix was applied before and
    did not resolve the finding, so offering it again would only repeat it."""
    if edit.span.start != edit.span.end or not edit.content.endswith(("\n", "\r")):
        return False
    inserted = [line.strip() for line in edit.content.splitlines()]
    row = edit.span.start.row - 1
    before = [line.strip() for line in facts.lines[max(row - len(inserted), 0):row]]
    after = [line.strip() for line in facts.lines[row:row + len(inserted)]]
    return inserted in (before, after)


def conflict_related(facts: FileFacts, conflict: Conflict) -> list[Related]:
    """The places that explain a conflict: where the graph was freed, where the carrier was set."""
    related: list[Related] = []
    freeing = conflict.freed_by
    if not facts.is_local(freeing.node):
        pass
    elif freeing.kind != "framework" and freeing.node is not conflict.failing.node:
        how = "torch.autograd.grad" if freeing.kind == "grad" else "backward"
        related.append(Related(facts.span(freeing.node), f"graph freed here by this {how} (no retain_graph)"))
    elif freeing.node is conflict.failing.node:
        related.append(Related(facts.span(freeing.node), "graph freed here by this same call in the previous iteration"))
    carrier = conflict.carrier
    if carrier is not None:
        local = [s for s in carrier.assignments if facts.is_local(s)]
        for statement in sorted(local, key=lambda s: facts.span(s).start)[:2]:
            related.append(Related(facts.span(statement), f"`{carrier.holder.text}` assigned here"))
    return related


def condition_note(facts: FileFacts, conflict: Conflict) -> str | None:
    """When the freeing call runs only under a condition: the words that name it."""
    if conflict.condition is None:
        return None
    branch, taken = conflict.condition
    test = getattr(branch, "test", None)
    if test is None:
        return None
    return f"it fails the first time `{facts.code(test)}` {'holds' if taken else 'does not hold'}"


def carrier_name(conflict: Conflict) -> str:
    """How a finding names the value that carried the stale graph."""
    if conflict.carrier is not None:
        return conflict.carrier.holder.text
    return conflict.failing.root_text or "the loss"


def freed_row(facts: FileFacts, conflict: Conflict) -> str:
    """Where the call that freed the graph is, as messages say it ("line 12", "cell 3, line 4")."""
    if conflict.freed_by.kind == "framework":
        return "the framework"
    return facts.where(conflict.freed_by.node)


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, in code order, discovered by importing the modules of this package."""
    found: list[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("gg"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule:
                if value.__module__ == module.__name__:
                    found.append(value())
    return tuple(sorted(found, key=lambda rule: rule.code))
