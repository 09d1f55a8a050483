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
from fixture_support import values_after

from gradguard.analysis.program import Program
from gradguard.analysis.values import Kind

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
    (loaded,) = values_after(AGENT, "loaded =", "loaded")
    assert loaded.elems is not None
    seen = list(loaded.elems)
    log_alpha, either, given = seen
    assert log_alpha.kind is Kind.INSTANCE and log_alpha.ref.name == "Scalar"
    assert log_alpha.alloc == "Agent.log_alpha"  # the object `__init__` made lives there too
    # Made of two classes by the code: the one this path made (a model replaced by a loaded one).
    assert either.kind is Kind.INSTANCE and either.ref.name == "Scalar"
    assert given.kind is not Kind.INSTANCE  # never an object of the program's classes: not known


def test_an_attribute_read_in_a_method_analysed_alone_is_the_class_the_code_makes() -> None:
    """The class's own method run as an entry point, the object unseen: `self.log_alpha` read
    after the resume there is the one class `__init__` makes; `self.either`, of two classes, is not
    known."""
    program = Program(cst.parse_module(AGENT), frozenset())
    agent = next(c for c in program.classes.values() if c.name == "Agent")
    made = program.assigned_class(agent, "log_alpha")
    assert made is not None and made[0].name == "Scalar" and made[1] == "Agent.log_alpha"
    assert program.assigned_class(agent, "either") is None
    assert program.assigned_class(agent, "given") is None


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
    seen = values_after(UNWRAPPED, "unwrapped =", "unwrapped")
    assert seen and all(v.kind is Kind.INSTANCE and v.ref.name == "Net" for v in seen)


RESUMED = '''
import torch
import torch.nn as nn
import apex


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def load(flag):
    teacher = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    student = Net()
    if flag:
        teacher, _ = torch.load("teacher.pt")
        student = apex.amp.initialize(student)
    return teacher, student


models = load(True)
'''


def test_a_model_rebound_to_what_an_unseen_call_gives_stays_that_model() -> None:
    """`teacher, _ = torch.load(path)`, `student = amp.initialize(student)`: the same kind of model
    the code made before (forward hooks registered on its layers still run when it is called: r52,
    DeepInversion), on the path that took the load as on the other."""
    (models,) = values_after(RESUMED, "models =", "models")
    assert models.elems is not None
    seen = list(models.elems)
    teacher, student = seen
    assert teacher.kind is Kind.MODULE and teacher.qual == "torch.nn.Sequential"
    assert student.kind is Kind.INSTANCE and student.ref.name == "Net"
