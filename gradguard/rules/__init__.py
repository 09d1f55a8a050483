"""The rules: one module per rule (`ggNNN_<name>.py`), each holding one `Rule` subclass.

Rules never walk the syntax tree themselves. They read the facts the analysis computed once per file
(`gradguard.analysis.facts.FileFacts`) and turn the ones they own into diagnostics with fixes.
The registry builds itself by importing every module of this package.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from functools import cache
from typing import ClassVar

from gradguard import catalogue
from gradguard.analysis.facts import FileFacts
from gradguard.model import Diagnostic


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
