"""Python builtins and a few standard-library calls, by the bare names the analysis qualifies them with."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    # The builtin sum adds: an AddBackward node saves no tensor.
    Fact("sum", returns=Returns.DERIVED, saves=False),
    # max/min compare and hand back one of their arguments: no new node.
    *facts(("max", "min"), returns=Returns.DERIVED, saves=False),
    *facts(("float", "int", "bool", "str", "repr", "len", "isinstance", "issubclass", "id", "hash",
            "type", "format", "round", "math.isnan", "math.isfinite", "math.isinf", "numpy.array",
            "numpy.asarray", "numpy.mean"), returns=Returns.VALUE),
    # numpy arrays: a tensor stored into one (`buf[i] = logprob`) is converted to a number, graph dropped.
    *facts(("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.zeros_like", "numpy.ones_like",
            "numpy.empty_like", "numpy.full_like", "numpy.arange"), returns=Returns.VALUE),
    # `hasattr(obj, "name")`: true for an object of a class of the project that defines `name`.
    Fact("hasattr", returns=Returns.VALUE, attribute_test=True),
    *facts(("print", "logging.info", "logging.debug", "logging.warning"), returns=Returns.NONE),
    *facts(("range", "iter", "open"), returns=Returns.DATA),
    # A property's method runs on every read of its attribute.
    Fact("property", returns=Returns.FUNCTION, accessor=True),
)
