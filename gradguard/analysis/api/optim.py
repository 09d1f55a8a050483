"""torch.optim: optimizers, and how often `step(closure)` calls its closure."""

from __future__ import annotations

from gradguard.analysis.api.facts import (
              Callback,
              Fact,
              Family,
              Receiver,
              Returns,
              Role,
              facts,
              prefixed,
)

O = Receiver.OPTIMIZER
OPTIMIZERS = ("ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon", "NAdam",
              "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam")

# Any other class of torch.optim is an optimizer; its schedulers are not.
FAMILIES: tuple[Family, ...] = (Family("torch.optim.", Returns.OPTIMIZER),
                                Family("torch.optim.lr_scheduler.", Returns.UNKNOWN))

# Where an optimizer object keeps what it updates: its groups, each a dict whose entry holds the tensors.
PARAM_GROUPS = "param_groups"
GROUP_PARAMS = "params"

FACTS: tuple[Fact, ...] = (
    *prefixed("torch.optim.", OPTIMIZERS, returns=Returns.OPTIMIZER),
    Fact("torch.optim.Optimizer", returns=Returns.OPTIMIZER),
    # LBFGS evaluates the closure up to max_eval times per step (25 with the defaults).
    Fact("torch.optim.LBFGS.step", returns=Returns.VALUE, calls=Callback(0, times=25)),
    Fact("step", O, returns=Returns.VALUE, calls=Callback(0, keyword="closure"), updates_weights=True),
    Fact("zero_grad", O, returns=Returns.NONE, resets_grads=True),
    Fact("add_param_group", O, returns=Returns.NONE, stores=Role.ARGUMENT),
    *facts(("state_dict", "load_state_dict"), O, returns=Returns.DATA),
)
