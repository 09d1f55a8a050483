"""random and numpy.random: calls that pick some items of a container, the way a replay buffer is read."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    *facts(("random.sample", "random.choices", "numpy.random.choice"), returns=Returns.DERIVED, picks=True),
    Fact("random.choice", returns=Returns.DERIVED, picks=True),
    # Draws: each call another result.
    *facts(("random.sample", "random.choices", "random.choice", "random.random", "random.uniform",
            "random.gauss", "random.randint", "random.randrange", "random.shuffle", "numpy.random.choice",
            "numpy.random.rand", "numpy.random.randn", "numpy.random.randint", "numpy.random.normal",
            "numpy.random.uniform", "numpy.random.shuffle", "numpy.random.permutation"), draws=True),
)
