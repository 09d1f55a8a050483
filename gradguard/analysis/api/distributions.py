"""torch.distributions: built from tensors with a graph, they carry it; some cache derived tensors
(`logits`, `probs`, `scale_tril`) on first read, so a distribution kept across steps hands out a graph
that the first backward freed."""

from __future__ import annotations

from gradguard.analysis.api.facts import (
    Cache,
    Fact,
    Family,
    Receiver,
    Returns,
    facts,
    prefixed,
)

PREFIX = "torch.distributions."
D = Receiver.DISTRIBUTION
FAMILIES: tuple[Family, ...] = (Family(PREFIX, Returns.DISTRIBUTION),)

FACTS: tuple[Fact, ...] = (
    # The wrappers (OneHotCategorical, Multinomial, the Relaxed ones) cache in the distribution they wrap.
    *prefixed(PREFIX, ("Bernoulli", "Binomial", "Categorical", "ContinuousBernoulli", "Geometric",
                       "NegativeBinomial", "OneHotCategorical", "RelaxedBernoulli", "RelaxedOneHotCategorical",
                       "Multinomial"),
              returns=Returns.DISTRIBUTION, caches=Cache.ATTRIBUTES, cached=("logits", "probs")),
    *prefixed(PREFIX, ("MultivariateNormal", "Wishart"), returns=Returns.DISTRIBUTION, caches=Cache.ATTRIBUTES,
              cached=("covariance_matrix", "precision_matrix", "scale_tril")),
    Fact(PREFIX + "LowRankMultivariateNormal", returns=Returns.DISTRIBUTION, caches=Cache.ATTRIBUTES,
         cached=("covariance_matrix", "precision_matrix", "scale_tril", "variance")),
    *prefixed(PREFIX, ("Normal", "Uniform", "Beta", "Gamma", "Dirichlet", "Exponential", "Laplace", "LogNormal",
                       "Cauchy", "Poisson", "StudentT", "Gumbel", "HalfNormal", "HalfCauchy", "Independent",
                       "TransformedDistribution", "MixtureSameFamily", "Distribution"),
              returns=Returns.DISTRIBUTION),
    # sample() runs under no_grad; rsample() is reparameterised and carries the parameters' graph.
    Fact("sample", D, returns=Returns.FRESH),
    *facts(("rsample", "log_prob", "entropy", "cdf", "icdf"), D, returns=Returns.DERIVED),
    *facts(("sample", "rsample", "sample_n"), D, draws=True),
)
