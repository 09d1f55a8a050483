"""torch.utils.checkpoint: the function runs now without saving activations, and again in backward."""

from __future__ import annotations

from gradguard.analysis.api.facts import Callback, Fact, Returns

FACTS: tuple[Fact, ...] = (
    Fact("torch.utils.checkpoint.checkpoint", returns=Returns.DERIVED,
         calls=Callback(0, times=1, when="recompute", passes=("*args",))),
    Fact("torch.utils.checkpoint.checkpoint_sequential", returns=Returns.DERIVED,
         calls=Callback(0, times=1, when="recompute", passes=("input",))),
)
