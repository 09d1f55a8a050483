"""torch.utils.checkpoint: the function runs now without saving activations, and again in backward."""

from __future__ import annotations

from gradguard.analysis.api.facts import Callback, Fact, Returns, When

FACTS: tuple[Fact, ...] = (
    Fact("torch.utils.checkpoint.checkpoint", returns=Returns.DERIVED,
         calls=Callback(0, times=1, when=When.RECOMPUTE, passes=("*args",))),
    Fact("torch.utils.checkpoint.checkpoint_sequential", returns=Returns.DERIVED,
         calls=Callback(0, times=1, when=When.RECOMPUTE, passes=("input",))),
)
