"""Hooks: module and tensor callbacks that see activations and gradients."""

from __future__ import annotations

from gradguard.analysis.api.facts import Callback, Fact, Receiver, Returns, When

M = Receiver.MODULE

FACTS: tuple[Fact, ...] = (
    Fact("register_forward_hook", M, returns=Returns.VALUE, evidence=True,
         calls=Callback(0, keyword="hook", when=When.FORWARD, passes=("module", "input", "output"))),
    Fact("register_forward_pre_hook", M, returns=Returns.VALUE,
         calls=Callback(0, keyword="hook", when=When.FORWARD, passes=("module", "input"))),
    Fact("register_full_backward_hook", M, returns=Returns.VALUE, evidence=True,
         calls=Callback(0, keyword="hook", when=When.BACKWARD, passes=("module", "grad_input", "grad_output"))),
    Fact("register_full_backward_pre_hook", M, returns=Returns.VALUE,
         calls=Callback(0, keyword="hook", when=When.BACKWARD, passes=("module", "grad_output"))),
    Fact("register_backward_hook", M, returns=Returns.VALUE,
         calls=Callback(0, keyword="hook", when=When.BACKWARD, passes=("module", "grad_input", "grad_output"))),
    Fact("torch.nn.modules.module.register_module_forward_hook", returns=Returns.VALUE,
         calls=Callback(0, keyword="hook", when=When.FORWARD, passes=("module", "input", "output"))),
    Fact("torch.nn.modules.module.register_module_forward_pre_hook", returns=Returns.VALUE,
         calls=Callback(0, keyword="hook", when=When.FORWARD, passes=("module", "input"))),
)
