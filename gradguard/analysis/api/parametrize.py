"""Parametrizations and the legacy weight_norm / spectral_norm: where a module's weight is computed."""

from __future__ import annotations

from gradguard.analysis.api.facts import Cache, Computes, Fact, Returns, Role, prefixed

# The attribute a call that `computes` one makes computed: its second argument, or these keywords.
DEFAULT_ATTRIBUTE = "weight"
NAME_KEYWORDS = ("name", "tensor_name")

FACTS: tuple[Fact, ...] = (
    # The parametrized weight is recomputed (a fresh graph) on every read...
    Fact("torch.nn.utils.parametrize.register_parametrization", returns=Returns.ARGUMENT, stores=Role.ARGUMENTS,
         computes=Computes.READ),
    *prefixed("torch.nn.utils.parametrizations.", ("weight_norm", "spectral_norm", "orthogonal"),
              returns=Returns.ARGUMENT, computes=Computes.READ),
    # ...except inside `with parametrize.cached():`, where the first read is kept for the whole block.
    Fact("torch.nn.utils.parametrize.cached", returns=Returns.CONTEXT, caches=Cache.BLOCK),
    Fact("torch.nn.utils.parametrize.remove_parametrizations", returns=Returns.ARGUMENT, computes=Computes.REMOVED),
    # The legacy hooks compute `weight` in a forward pre-hook: read before a forward, it is the one
    # the last forward built, whose graph a backward may have freed. weight_norm computes it once
    # when applied as well; spectral_norm leaves a copy without graph until the first forward.
    Fact("torch.nn.utils.weight_norm", returns=Returns.ARGUMENT, caches=Cache.FORWARD, cached=("weight",),
         computes=Computes.FORWARD),
    Fact("torch.nn.utils.spectral_norm", returns=Returns.ARGUMENT, caches=Cache.FORWARD, cached=("weight",),
         computes=Computes.AFTER_FORWARD),
    *prefixed("torch.nn.utils.", ("remove_weight_norm", "remove_spectral_norm"), returns=Returns.ARGUMENT,
              computes=Computes.REMOVED),
)
