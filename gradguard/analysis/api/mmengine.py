"""mmcv / mmengine: optimizer hooks and wrappers run the backward pass on the loss they are given."""

from __future__ import annotations

from gradguard.analysis.api.facts import Backward, Fact, Receiver, Returns, Role, facts

O = Receiver.OPTIMIZER

FACTS: tuple[Fact, ...] = (
    # mmengine's OptimWrapper: update_params(loss) = backward + step + zero_grad.
    *facts(("update_params", "backward"), O, backward=Backward.BACKWARD, root=Role.ARGUMENT,
           returns=Returns.NONE),
    *facts(("mmengine.optim.OptimWrapper", "mmengine.optim.AmpOptimWrapper"), returns=Returns.OPTIMIZER),
    # mmcv's runner: after each iteration the OptimizerHook backward()s `runner.outputs["loss"]`,
    # the loss the model's train_step returned.
    *facts(("mmcv.runner.OptimizerHook", "mmcv.runner.Fp16OptimizerHook", "mmcv.runner.hooks.OptimizerHook"),
           returns=Returns.UNKNOWN),
    *facts(("mmcv.runner.OptimizerHook.after_train_iter", "mmcv.runner.Fp16OptimizerHook.after_train_iter"),
           backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE),
)
