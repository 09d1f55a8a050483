"""Lightning: automatic optimization backward()s what training_step returns; manual optimization
(`self.automatic_optimization = False`) leaves it to `self.manual_backward(loss)`. Fabric's methods
mirror accelerate's."""

from __future__ import annotations

from gradguard.analysis.api.facts import (
    Backward,
    BaseClass,
    Fact,
    Receiver,
    Returns,
    Role,
    facts,
)

L = Receiver.LIGHTNING
A = Receiver.ACCELERATOR

FACTS: tuple[Fact, ...] = (
    *facts(("lightning.pytorch.LightningModule", "lightning.LightningModule", "pytorch_lightning.LightningModule"),
           returns=Returns.MODULE,
           base=BaseClass(backward_on=("training_step",), manual_flag="automatic_optimization",
                          loss_keys=("loss",), framework="Lightning")),
    Fact("manual_backward", L, backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE),
    # self.log detaches what it records.
    *facts(("log", "log_dict", "save_hyperparameters", "print"), L, returns=Returns.NONE),
    *facts(("optimizers", "lr_schedulers", "configure_optimizers"), L, returns=Returns.UNKNOWN),
    *facts(("toggle_optimizer", "untoggle_optimizer"), L, returns=Returns.NONE),
    *facts(("lightning.fabric.Fabric", "lightning.Fabric"), returns=Returns.UNKNOWN),
    *facts(("setup", "setup_optimizers"), A, returns=Returns.ARGUMENTS),
    Fact("setup_module", A, returns=Returns.ARGUMENT),
)
