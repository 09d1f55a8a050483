"""accelerate: `accelerator.backward(loss)` is loss.backward(); `prepare` hands its arguments back wrapped."""

from __future__ import annotations

from gradguard.analysis.api.facts import Backward, Fact, Receiver, Returns, Role, facts

A = Receiver.ACCELERATOR

FACTS: tuple[Fact, ...] = (
    Fact("accelerate.Accelerator", returns=Returns.UNKNOWN),
    Fact("backward", A, backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE),
    Fact("prepare", A, returns=Returns.ARGUMENTS),
    *facts(("unwrap_model", "prepare_model", "prepare_optimizer", "prepare_data_loader"), A,
           returns=Returns.ARGUMENT),
    *facts(("accumulate", "autocast", "no_sync"), A, returns=Returns.CONTEXT),
    Fact("clip_grad_norm_", A, returns=Returns.CUT),
)
