"""Losses and comparisons: which argument a loss compares its input against (its target).

A value that reaches a loss only there, or only as one side of a difference or ratio whose other side
is a fresh output of the module that made it (PPO's `exp(new_log_probs - old_log_probs)`), is a
reference the loss compares against: a snapshot, computed without a graph where it is made.
"""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, facts, prefixed

# A loss's target: its second argument, or this keyword (the functional form and the module's call).
TARGET = (1, "target")
# A difference or a ratio: either side may be the reference.
EITHER = (-1, "")

FACTS: tuple[Fact, ...] = (
    *prefixed("torch.nn.functional.", (
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "cross_entropy",
        "binary_cross_entropy", "binary_cross_entropy_with_logits", "poisson_nll_loss"), reference=TARGET),
    *prefixed("torch.nn.", (
        "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CrossEntropyLoss", "BCELoss",
        "BCEWithLogitsLoss", "PoissonNLLLoss"), reference=TARGET),
    *facts(("torch.sub", "torch.subtract", "torch.div", "torch.divide", "torch.true_divide"), reference=EITHER),
)
