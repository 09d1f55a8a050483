"""copy: a copied module is a module of its own (an EMA teacher, a DQN target network), with its own
parameters; a copied tensor is a new leaf (a tensor with a graph cannot be deep-copied)."""

from __future__ import annotations

from gradguard.analysis.api.facts import Returns, facts

FACTS = facts(("copy.deepcopy", "copy.copy"), returns=Returns.COPY)
