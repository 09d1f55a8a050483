"""functools: memoising decorators keep tensors (and their graphs) from one call to the next."""

from __future__ import annotations

from gradguard.analysis.api.facts import Cache, Callback, Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    *facts(("functools.lru_cache", "functools.cache"), returns=Returns.FUNCTION, caches=Cache.RESULT, uncached=""),
    # Computed on the first read of the attribute, then kept on the instance.
    Fact("functools.cached_property", returns=Returns.FUNCTION, caches=Cache.ATTRIBUTES, accessor=True,
         uncached="property"),
    Fact("functools.partial", returns=Returns.FUNCTION),
    Fact("functools.wraps", returns=Returns.FUNCTION),
    Fact("functools.reduce", returns=Returns.DERIVED, calls=Callback(0, passes=("accumulated", "item"))),
)
