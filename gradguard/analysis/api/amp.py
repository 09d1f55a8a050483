"""Automatic mixed precision: GradScaler passes the loss's graph through; autocast changes dtypes only."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Receiver, Returns, facts

S = Receiver.SCALER

FACTS: tuple[Fact, ...] = (
    *facts(("torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"),
           returns=Returns.UNKNOWN),
    # scaler.scale(loss) multiplies: the result carries the loss's graph, and backward goes through it.
    Fact("scale", S, returns=Returns.ARGUMENT),
    Fact("step", S, returns=Returns.VALUE),
    *facts(("update", "unscale_"), S, returns=Returns.NONE),
    *facts(("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"),
           returns=Returns.CONTEXT),
)
