"""weakref and collections: references that give their object back when called, and dictionaries of
other classes (a per-network cache of weak references to the modules a reset walks)."""

from __future__ import annotations

from gradguard.analysis.api.facts import Collects, Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    # `ref(module)()` is `module` again (or None once it is gone, which a program tests first).
    *facts(("weakref.ref", "weakref.proxy"), returns=Returns.REFERENCE),
    *facts(("weakref.WeakKeyDictionary", "weakref.WeakValueDictionary", "collections.OrderedDict"),
           collects=Collects.DICT, pure=True),
)
