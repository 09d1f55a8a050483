"""mmcv / mmengine: optimizer hooks and wrappers run the backward pass on the loss they are given."""

from __future__ import annotations

from gradguard.analysis.api.facts import Backward, BaseClass, Fact, Receiver, Returns, Role, facts

O = Receiver.OPTIMIZER

FACTS: tuple[Fact, ...] = (
    # mmengine's OptimWrapper: update_params(loss) = backward + step + zero_grad.
    *facts(("update_params", "backward"), O, backward=Backward.BACKWARD, root=Role.ARGUMENT,
           returns=Returns.NONE),
    *facts(("mmengine.optim.OptimWrapper", "mmengine.optim.AmpOptimWrapper"), returns=Returns.OPTIMIZER),
    # mmcv's runner calls the model's `train_step(data, optimizer)`; after each iteration its
    # OptimizerHook backward()s `runner.outputs["loss"]`, the loss train_step returned.
    *facts(("mmcv.runner.BaseModule", "mmcv.runner.base_module.BaseModule"), returns=Returns.MODULE,
           base=BaseClass(backward_on=("train_step",), loss_keys=("loss",), framework="mmcv's OptimizerHook")),
    *facts(("mmcv.runner.OptimizerHook", "mmcv.runner.Fp16OptimizerHook", "mmcv.runner.hooks.OptimizerHook"),
           returns=Returns.UNKNOWN),
)
