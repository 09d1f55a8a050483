"""DeepSpeed: the engine's backward(loss) runs the backward pass; step() updates the weights."""

from __future__ import annotations

from gradguard.analysis.api.facts import Backward, Fact, Receiver, Returns, Role

E = Receiver.ENGINE

FACTS: tuple[Fact, ...] = (
    # (engine, optimizer, training_dataloader, lr_scheduler): the engine runs the model's forward.
    Fact("deepspeed.initialize", returns=Returns.ARGUMENTS,
         hands_back=("model", "optimizer", "training_data", "lr_scheduler")),
    Fact("backward", E, backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE),
    Fact("step", E, returns=Returns.NONE),
)
