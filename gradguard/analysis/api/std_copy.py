"""copy: a deep-copied module is a module of its own (an EMA teacher, a DQN target network), with
parameters of its own; a deep-copied tensor is a new leaf (a tensor with a graph cannot be copied so)."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Returns

FACTS = (Fact("copy.deepcopy", returns=Returns.COPY),)
