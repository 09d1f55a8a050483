"""An attribute set from something unseen where the class's own code otherwise makes it one class's
object (`ExpressionEvaluation.assigned_class`): CORL's CQL resumes with
`self.log_alpha = state_dict["sac_log_alpha"]` (an item of `torch.load`'s result), where `__init__`
made `self.log_alpha = Scalar(0.0)`. Read after the resume, it is that `Scalar` (its forward returns
its parameter; `exp` saves its output, never the stepped parameter), not a module known only by
name whose output was taken to save the parameters the temperature's step then changed (r49: six
false GG011 in CORL). An attribute the code makes of two classes, or of none, stays unknown.
"""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.program import Program
from gradguard.analysis.state import Frame, State
from gradguard.analysis.values import Kind, Value

AGENT = '''
import torch
import torch.nn as nn


class Scalar(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.constant = nn.Parameter(torch.tensor(value))

    def forward(self):
        return self.constant


class Other(nn.Module):
    def forward(self):
        return torch.zeros(())


class Agent:
    def __init__(self, other):
        self.log_alpha = Scalar(0.0)
        if other:
            self.either = Other()
        else:
            self.either = Scalar(0.0)
        self.given = other

    def load_state_dict(self, state_dict):
        self.log_alpha = state_dict["log_alpha"]
        self.either = state_dict["either"]
        self.given = state_dict["given"]


agent = Agent(False)
agent.load_state_dict(torch.load("checkpoint.pt"))
loaded = (agent.log_alpha, agent.either, agent.given)
'''


def test_an_attribute_loaded_from_a_checkpoint_is_the_class_the_code_makes() -> None:
    seen: list[Value] = []

    class Watching(Program):
        def _exec_statement(self, statement: cst.CSTNode, state: State, frame: Frame) -> None:
            super()._exec_statement(statement, state, frame)
            if frame.function is None and self.code_of(statement).startswith("loaded ="):
                found = self.lookup("loaded", state, frame)
                assert found is not None and found.elems is not None
                seen.extend(found.elems)

    Watching(cst.parse_module(AGENT), frozenset()).run()
    log_alpha, either, given = seen
    assert log_alpha.kind is Kind.INSTANCE and log_alpha.ref.name == "Scalar"
    assert log_alpha.alloc == "Agent.log_alpha"  # the object `__init__` made lives there too
    assert either.kind is not Kind.INSTANCE  # made of two classes: not known
    assert given.kind is not Kind.INSTANCE  # never made by the class's code: not known


UNWRAPPED = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


model = Net()
if hasattr(model, "module"):
    model = model.module
unwrapped = model
'''


def test_a_wrapped_module_read_through_module_is_the_module() -> None:
    """`model.module` (DataParallel's wrapped module, read to unwrap it) of a module of the program
    is that module (the `module` attribute fact), not a parameter registered elsewhere (r51)."""
    seen: list[Value] = []

    class Watching(Program):
        def _exec_statement(self, statement: cst.CSTNode, state: State, frame: Frame) -> None:
            super()._exec_statement(statement, state, frame)
            if frame.function is None and self.code_of(statement).startswith("unwrapped ="):
                found = self.lookup("unwrapped", state, frame)
                assert found is not None
                seen.append(found)

    Watching(cst.parse_module(UNWRAPPED), frozenset()).run()
    assert seen and all(v.kind is Kind.INSTANCE and v.ref.name == "Net" for v in seen)
