"""random and numpy.random: calls that pick some items of a container, the way a replay buffer is read."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Returns, facts

# The same functions as methods of a generator object of their own (`self.rng = random.Random(seed)`).
_PICKS = ("random.sample", "random.choices", "random.Random.sample", "random.Random.choices",
          "numpy.random.choice", "numpy.random.RandomState.choice", "numpy.random.Generator.choice")
_DRAWS = ("random.random", "random.uniform", "random.gauss", "random.randint", "random.randrange", "random.shuffle",
          "numpy.random.rand", "numpy.random.randn", "numpy.random.randint", "numpy.random.normal",
          "numpy.random.uniform", "numpy.random.shuffle", "numpy.random.permutation")
_GENERATOR_DRAWS = ("random", "uniform", "gauss", "randint", "randrange", "shuffle")
_STATE_DRAWS = ("rand", "randn", "randint", "normal", "uniform", "shuffle", "permutation", "random")
_GENERATOR_METHODS = ("integers", "normal", "uniform", "shuffle", "permutation", "random")

FACTS: tuple[Fact, ...] = (
    Fact("random.Random", returns=Returns.OBJECT),
    Fact("numpy.random.RandomState", returns=Returns.OBJECT),
    Fact("numpy.random.default_rng", returns=Returns.OBJECT, instance="numpy.random.Generator"),
    *facts(_PICKS, returns=Returns.DERIVED, picks=True),
    *facts(("random.choice", "random.Random.choice"), returns=Returns.DERIVED, picks=True),
    # Draws: each call another result.
    *facts((*_PICKS, "random.choice", "random.Random.choice", *_DRAWS,
            *(f"random.Random.{name}" for name in _GENERATOR_DRAWS),
            *(f"numpy.random.RandomState.{name}" for name in _STATE_DRAWS),
            *(f"numpy.random.Generator.{name}" for name in _GENERATOR_METHODS)),
           draws=True),
)
