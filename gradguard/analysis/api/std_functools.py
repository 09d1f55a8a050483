"""functools: memoising decorators keep tensors (and their graphs) from one call to the next."""

from __future__ import annotations

from gradguard.analysis.api.facts import Cache, Callback, Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    *facts(("functools.lru_cache", "functools.cache"), returns=Returns.FUNCTION, caches=Cache.RESULT),
    Fact("functools.cached_property", returns=Returns.FUNCTION, caches=Cache.ATTRIBUTES),
    Fact("functools.partial", returns=Returns.FUNCTION),
    Fact("functools.wraps", returns=Returns.FUNCTION),
    Fact("functools.reduce", returns=Returns.DERIVED, calls=Callback(0, passes=("accumulated", "item"))),
)
