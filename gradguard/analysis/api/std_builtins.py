"""Python builtins and a few standard-library calls, by the bare names the analysis qualifies them with."""

from __future__ import annotations

from gradguard.analysis.api.facts import Collects, Fact, Receiver, Returns, Role, facts

C = Receiver.CONTAINER

FACTS: tuple[Fact, ...] = (
    # The builtin sum adds: an AddBackward node saves no tensor.
    Fact("sum", returns=Returns.DERIVED, saves=False),
    # max/min compare and hand back one of their arguments: no new node.
    *facts(("max", "min"), returns=Returns.DERIVED, saves=False),
    Fact("type", returns=Returns.VALUE, pure=True, type_of=True),
    *facts(("float", "int", "bool", "str", "repr", "id", "hash", "format", "round", "math.isnan",
            "math.isfinite", "math.isinf", "numpy.array", "numpy.asarray", "numpy.mean"), returns=Returns.VALUE),
    # Pure: a condition over them holds the same until their arguments change.
    *facts(("len", "issubclass", "callable"), returns=Returns.VALUE, pure=True),
    # `isinstance(m, LIF)`: decided for an object of a project class (or a library module) and a
    # class of the project.
    Fact("isinstance", returns=Returns.VALUE, pure=True, class_test=True),
    # numpy arrays: a tensor stored into one (`buf[i] = logprob`) is converted to a number, graph dropped.
    *facts(("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.zeros_like", "numpy.ones_like",
            "numpy.empty_like", "numpy.full_like", "numpy.arange"), returns=Returns.VALUE),
    # `hasattr(obj, "name")`: true for an object of a class of the project that defines `name`.
    Fact("hasattr", returns=Returns.VALUE, attribute_test=True, pure=True),
    *facts(("print", "logging.info", "logging.debug", "logging.warning"), returns=Returns.NONE),
    Fact("range", returns=Returns.DATA, pure=True, counts=True),
    Fact("super", returns=Returns.UNKNOWN, proxies_bases=True),
    Fact("importlib.import_module", returns=Returns.UNKNOWN, imports_named=True),
    Fact("open", returns=Returns.DATA),
    # An iterator over its argument's items (`next(it)` gives one of them, as a `for` would).
    Fact("iter", returns=Returns.DATA, iterates=True, iterator=True),
    # Containers made of what the arguments hold (what they return is what `collects` says).
    Fact("list", collects=Collects.LIST, pure=True),
    Fact("collections.deque", collects=Collects.LIST),
    Fact("tuple", collects=Collects.TUPLE, pure=True),
    Fact("zip", collects=Collects.ZIP, iterates=True, pure=True),
    Fact("enumerate", collects=Collects.ENUMERATE, iterates=True, pure=True),
    *facts(("reversed", "sorted", "set"), collects=Collects.ITEMS, pure=True),
    # `dict(loss=loss, log_vars=logs)`: a dict keyed by the keywords, as the display `{"loss": loss, ...}`.
    Fact("dict", collects=Collects.DICT, pure=True),
    # One item of the iterator or iterable it is given (which one is not known).
    Fact("next", returns=Returns.ITEM),
    # A property's method runs on every read of its attribute.
    Fact("property", returns=Returns.FUNCTION, accessor=True),
    # A class method gets the class (`cls(...)` makes an object of it); a static method nothing.
    Fact("classmethod", returns=Returns.FUNCTION, binds="class"),
    Fact("staticmethod", returns=Returns.FUNCTION, binds="static"),
    # Bases that give objects no attribute of their own: a class deriving only from them and from
    # classes of the project is all seen.
    *facts(("object", "abc.ABC", "typing.Generic", "typing.Protocol"), plain_base=True),
    # The methods of lists, dicts, sets and deques: what they keep, hand out or drop.
    *facts(("append", "add", "appendleft"), C, returns=Returns.NONE, stores=Role.ARGUMENT),
    *facts(("insert", "setdefault", "update"), C, returns=Returns.NONE, stores=Role.LAST),
    *facts(("extend", "extendleft"), C, returns=Returns.NONE, stores=Role.ITEMS),
    Fact("clear", C, returns=Returns.NONE, clears=True),
    *facts(("pop", "popleft"), C, returns=Returns.ITEM),
    Fact("get", C, returns=Returns.ITEM, missing=1),
    *facts(("values", "copy"), C, returns=Returns.RECEIVER, pure=True),
    # (key, value) pairs: the keys are names, whatever graphs the values carry.
    Fact("items", C, returns=Returns.RECEIVER, pure=True, named=True),
    # The keys of a dict are names (strings, numbers): whatever graph its values carry, not theirs.
    Fact("keys", C, returns=Returns.VALUE, pure=True),
)
