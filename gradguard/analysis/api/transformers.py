"""transformers' Trainer backward()s the loss an overridden compute_loss returns."""

from __future__ import annotations

from gradguard.analysis.api.facts import BaseClass, Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    *facts(("transformers.Trainer", "transformers.trainer.Trainer"), returns=Returns.UNKNOWN,
           base=BaseClass(backward_on=("compute_loss",), framework="The transformers Trainer")),
)
