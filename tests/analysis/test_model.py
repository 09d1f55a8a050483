"""Unit tests of the dataflow model itself, independent of the rules: condition atoms and what they
decide, path partitions, loops reaching a fixed point, unseen arguments, project modules."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import libcst as cst
import pytest

from gradguard.analysis import analyze, analyze_file, facts_for
from gradguard.analysis.conditions import Atom, decide, equality_of, key_of, strip_not
from gradguard.analysis.evidence import Role, roles_in
from gradguard.analysis.interpreter import Interpreter, _getter_test, _plain_separation
from gradguard.analysis.project import Project
from gradguard.analysis.scopes import checked_locals, placement
from gradguard.analysis.state import OPAQUE, ClassInfo, State
from gradguard.analysis.values import GENERATIONS, UNKNOWN, Freed, Kind, Value, join, node_id


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _atom(code: str, truth: bool, seq: int = 1) -> tuple[str, Atom]:
    expr, positive = strip_not(_expr(code))
    key = key_of(expr)
    assert key is not None
    return key, Atom(key, positive == truth, frozenset(), frozenset(), 1, seq, code, equality_of(expr))


def _program(code: str) -> str:
    return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + textwrap.dedent(code)


# -- condition atoms ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "key"),
    [
        ("flag", "flag"),
        ("args.with_prior", "args.with_prior"),
        ("step % args.log_every == 0", "((step % args.log_every) == 0)"),
        ("x is None", "(x is None)"),
        ("len(buffer) > 0", "(len(buffer) > 0)"),
        ("cfg['kind'] == 'l2'", "(cfg['kind'] == 'l2')"),
    ],
)
def test_branch_tests_over_names_are_atoms(code: str, key: str) -> None:
    assert key_of(_expr(code)) == key


@pytest.mark.parametrize("code", ["random.random() > 0.5", "model(x).sum() > 0", "next(it)"])
def test_tests_that_call_are_not_atoms(code: str) -> None:
    assert key_of(_expr(code)) is None


def test_an_assumed_atom_decides_the_same_test_and_its_negation() -> None:
    assume = dict([_atom("flag", True)])
    assert decide(_expr("flag"), assume) is True
    assert decide(_expr("not flag"), assume) is False
    assert decide(_expr("other"), assume) is None


def test_an_equality_decides_the_other_literals_of_an_elif_chain() -> None:
    assume = dict([_atom("args.loss == 'l2'", True)])
    assert decide(_expr("args.loss == 'huber'"), assume) is False
    assert decide(_expr("args.loss != 'l2'"), assume) is False
    assert decide(_expr("args.loss == 'l2'"), assume) is True
    known_false = dict([_atom("args.loss == 'l2'", False)])
    assert decide(_expr("args.loss != 'l2'"), known_false) is True
    assert decide(_expr("args.loss == 'huber'"), known_false) is None


@pytest.mark.parametrize(
    ("assumed", "truth", "test", "expected"),
    [
        # What a membership test says the name is, or is not, decides equalities and other tests.
        ("args.task in ['cls', 'hybrid']", True, "args.task == 'density'", False),
        ("args.task in ['cls', 'hybrid']", True, "args.task == 'cls'", None),
        ("args.task in ['cls', 'hybrid']", True, "args.task in ('cls', 'hybrid', 'x')", True),
        ("args.task in ['cls', 'hybrid']", False, "args.task == 'cls'", False),
        ("args.task in ['cls', 'hybrid']", False, "args.task not in ['hybrid']", True),
        ("args.task in ['cls', 'hybrid']", False, "args.task == 'density'", None),
        ("args.task not in ('a', 'b')", True, "args.task == 'a'", False),
        ("args.task not in ('a', 'b')", False, "args.task in ['a', 'b', 'c']", True),
        ("args.task == 'cls'", True, "args.task in {'cls', 'hybrid'}", True),
        ("args.task == 'cls'", True, "args.task not in {'density'}", True),
        ("args.task != 'cls'", True, "args.task in ['cls']", False),
        # A string on the right is tested for a substring, not for membership.
        ("args.task == 'cls'", True, "args.task in 'cls_hybrid'", None),
        ("args.mode in ['a']", True, "args.task == 'b'", None),
    ],
)
def test_membership_tests_decide_equalities_of_the_same_name(
        assumed: str, truth: bool, test: str, expected: bool | None) -> None:
    assert decide(_expr(test), dict([_atom(assumed, truth)])) is expected


def test_two_membership_tests_together_narrow_what_the_name_can_be() -> None:
    assume = dict([_atom("args.task in ['cls', 'hybrid', 'density']", True),
                   _atom("args.task in ['cls', 'hybrid']", False, seq=2)])
    assert decide(_expr("args.task == 'density'"), assume) is True
    assert decide(_expr("args.task != 'density'"), assume) is False


def test_conjunctions_and_disjunctions_are_decided_from_their_parts() -> None:
    assume = dict([_atom("a", True), _atom("b", False, 2)])
    assert decide(_expr("a and b"), assume) is False
    assert decide(_expr("a or b"), assume) is True
    assert decide(_expr("a and c"), assume) is None


# -- states ---------------------------------------------------------------------------------------


def test_assigning_a_name_forgets_the_conditions_that_read_it() -> None:
    state = State()
    key, atom = _atom("step % k == 0", True)
    state.assume[key] = Atom(key, True, frozenset({"step", "k"}), frozenset(), 1, 1, "", None)
    other, atom2 = _atom("args.flag", True, 2)
    state.assume[other] = Atom(other, True, frozenset({"args.flag"}), frozenset(), 1, 2, "", None)
    state.assign_invalidates(name="step")
    assert list(state.assume) == [other]
    state.assign_invalidates(text="args")
    assert not state.assume


def test_a_join_keeps_only_the_conditions_both_paths_agree_on() -> None:
    left, right = State(), State()
    for state, truth in ((left, True), (right, False)):
        key, atom = _atom("flag", truth)
        state.assume[key] = atom
        shared_key, shared = _atom("args.train", True, 2)
        state.assume[shared_key] = shared
    joined = State.join_all([left, right])
    assert joined is not None
    assert set(joined.assume) == {"args.train"}


def _two_paths() -> tuple[State, State]:
    left, right = State(), State()
    for state, truth in ((left, True), (right, False)):
        key, atom = _atom("args.resume", truth)
        state.assume[key] = atom
        state.frames[0]["model"] = _MODEL
    return left, right


_MODEL = Value(Kind.MODULE, label="model")


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        # A path string bound on one path only, a counter set to different plain values.
        ({"path": Value(Kind.SCALAR)}, {}, True),
        ({"step": Value(Kind.SCALAR)}, {"step": UNKNOWN}, True),
        # A tensor with a graph, a module, a literal flag: what later code decides by.
        ({"h": Value(Kind.TENSOR, frozenset({node_id(3, 0)}), grad=True)}, {}, False),
        ({"net": Value(Kind.MODULE, label="net")}, {}, False),
        ({"use_amp": Value(Kind.SCALAR, label="True")}, {"use_amp": Value(Kind.SCALAR, label="False")}, False),
        # A fresh tensor without a graph is still a tensor: a later step may build one through it.
        ({"h": Value(Kind.TENSOR)}, {}, False),
    ],
)
def test_paths_that_differ_in_plain_values_only_are_interchangeable(
        left: dict[str, Value], right: dict[str, Value], expected: bool) -> None:
    a, b = _two_paths()
    a.frames[0].update(left)
    b.frames[0].update(right)
    assert a.interchangeable(b) is expected
    assert b.interchangeable(a) is expected


@pytest.mark.parametrize(
    ("key", "heap", "plain"),
    [
        ("args.resume", frozenset(), True),
        # An object's settings keep their truth into later calls of its methods (Shift-Net's
        # `self.opt.gan_type`): joining its paths would pair one call's arm with the other's.
        ("<object>:models:Net:net|self.opt.gan_type", frozenset({("models:Net", "opt")}), False),
        ("args.mode", frozenset({("models:Net", "mode")}), False),
        ("<arm>:12345", frozenset(), False),
    ],
)
def test_only_paths_told_apart_by_conditions_over_names_are_merged(
        key: str, heap: frozenset[tuple[str, str]], plain: bool) -> None:
    a, b = State(), State()
    for state, truth in ((a, True), (b, False)):
        state.assume[key] = Atom(key, truth, frozenset(), heap, 1, 1, key)
    assert _plain_separation(a, b) is plain


def test_paths_that_freed_different_graphs_are_not_interchangeable() -> None:
    a, b = _two_paths()
    a.freed[node_id(4, 0)] = Freed(object())  # type: ignore[arg-type]
    assert not a.interchangeable(b)


def test_a_site_run_more_often_on_one_path_keeps_the_paths_apart_only_if_a_value_comes_from_it() -> None:
    a, b = _two_paths()
    a.epochs[9] = 2
    b.epochs[9] = 1
    assert a.interchangeable(b)
    a.frames[0]["out"] = b.frames[0]["out"] = Value(Kind.TENSOR, frozenset({node_id(9, 0)}), grad=True)
    assert not a.interchangeable(b)


def test_the_conditions_of_interchangeable_paths_are_dropped_where_they_meet(monkeypatch: pytest.MonkeyPatch) -> None:
    """`if args.resume_from_checkpoint:` setting only a path and a step counter: the code after it
    runs once, not once per arm (the training loop of a long script ran four times over)."""
    source = _program("""
        import os
        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        if args.resume:
            path = os.path.basename(args.resume)
            first_epoch = int(path.split("-")[1])
        else:
            first_epoch = 0
        if args.report_to == "wandb":
            tracker = "wandb"
        for epoch in range(first_epoch, 3):
            loss = model(torch.randn(2, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)
    runs: list[int] = []
    original = Interpreter.for_parts

    def counting(self: Interpreter, statement: cst.For, state: State, frame: Any) -> list[State]:
        runs.append(1)
        return original(self, statement, state, frame)

    monkeypatch.setattr(Interpreter, "for_parts", counting)
    assert _codes(source) == []
    assert len(runs) == 1


def test_a_condition_the_others_decide_is_not_the_first_one_forgotten() -> None:
    """Six feasible paths (three tasks, an update every few steps or not) are more than a block
    keeps apart. `args.task in [...]` joins no partition once the two equalities are known, so
    forgetting it first buys nothing and loses what it says when one of them goes next; the update
    condition, which separates nothing the analysis decides by, is the one forgotten."""
    parts = []
    for task in ("density", "cls", "hybrid"):
        for stepped in (True, False):
            state = State()
            if task != "density":
                state.frames[0]["crossent"] = UNKNOWN
            tests = [("args.task in ['cls', 'hybrid']", task != "density"),
                     ("args.task == 'density'", task == "density"),
                     *([("args.task == 'cls'", task == "cls")] if task != "density" else []),
                     ("step % k == 0", stepped)]
            state.assume.update(_atom(code, truth, seq) for seq, (code, truth) in enumerate(tests, 1))
            parts.append(state)
    update = key_of(_expr("step % k == 0"))
    assert Interpreter._least_separating(parts) == update


def test_widening_folds_every_older_generation_into_the_summary() -> None:
    state = State()
    site = 7
    nodes = frozenset(node_id(site, g) for g in range(GENERATIONS))
    state.frames[0]["h"] = Value(Kind.TENSOR, nodes, frozenset({node_id(site, 1)}), True)
    call = object()
    state.freed[node_id(site, 2)] = Freed(call)  # type: ignore[arg-type]
    state.widen(frozenset({site}))
    value = state.frames[0]["h"]
    assert value.nodes == {node_id(site, 0), node_id(site, GENERATIONS - 1)}
    assert value.top == {node_id(site, GENERATIONS - 1)}
    assert set(state.freed) == {node_id(site, GENERATIONS - 1)}


def _holding(site: int, generation: int, epoch: int, freed: dict[int, Freed] | None = None) -> State:
    state = State()
    state.epochs[site] = epoch
    state.frames[0]["alpha"] = Value(Kind.TENSOR, frozenset({node_id(site, generation)}), grad=True)
    state.freed.update(freed or {})
    return state


def test_a_node_only_an_older_generation_holds_unfreed_is_maybe_freed_because_aged() -> None:
    """Loop passes joined: the earlier pass ran the site once less, so its current node becomes the
    older generation, which the later pass freed (`self.alpha` used, then rebuilt): weak, but no
    path is shown to skip the freeing."""
    site, call = 9, object()
    earlier = _holding(site, 0, epoch=1)
    later = _holding(site, 0, epoch=2, freed={node_id(site, 1): Freed(call)})  # type: ignore[arg-type]
    later.frames[0]["old"] = Value(Kind.TENSOR, frozenset({node_id(site, 1)}), grad=True)
    joined = State.join_all([earlier, later])
    assert joined is not None
    why = joined.freed[node_id(site, 1)]
    assert why.weak and why.aged


def test_a_node_a_path_holds_unfreed_at_the_same_epoch_is_maybe_freed_by_that_path() -> None:
    site, call = 9, object()
    kept = _holding(site, 1, epoch=2)
    freed = _holding(site, 1, epoch=2, freed={node_id(site, 1): Freed(call)})  # type: ignore[arg-type]
    joined = State.join_all([kept, freed])
    assert joined is not None
    why = joined.freed[node_id(site, 1)]
    assert why.weak and not why.aged



def test_an_instance_folded_into_the_summary_keeps_it_maybe_freed() -> None:
    """The summary generation stands for every older instance: folding a surely freed instance into
    one that is only maybe freed (a list item not yet backward-ed) leaves it maybe freed."""
    site, call = 5, object()
    state = State()
    last = node_id(site, GENERATIONS - 1)
    state.frames[0]["items"] = Value(Kind.LIST, frozenset({node_id(site, GENERATIONS - 2), last}), grad=True)
    state.freed[last] = Freed(call, weak=True, aged=True)  # type: ignore[arg-type]
    state.freed[node_id(site, GENERATIONS - 2)] = Freed(call)  # type: ignore[arg-type]
    state.rename_site(site)
    assert state.freed[last].weak and state.freed[last].aged


# -- scopes and evidence ----------------------------------------------------------------------


def test_names_bound_only_by_assignment_are_checked_after_their_first_assignment() -> None:
    module = cst.parse_module(textwrap.dedent("""\
        import os
        x = 1
        for i in range(3):
            y = i
        print(y)
        """))
    bindings = checked_locals(module)
    print_statement = module.body[-1]
    first = module.body[0]
    assert bindings.unbound_read_fails("y", print_statement)
    assert not bindings.unbound_read_fails("os", print_statement)  # imports are not checked
    assert not bindings.unbound_read_fails("x", first)  # a read before any assignment: a fragment


def test_how_a_function_uses_its_arguments_gives_their_roles() -> None:
    function = cst.parse_module(textwrap.dedent("""\
        def train(model, loader, optimizer, make_batch, log):
            model.train()
            for x in loader:
                out = model(x)
                optimizer.step()
                b = make_batch(3)
        """)).body[0]
    roles = roles_in(function.body, {})  # type: ignore[attr-defined]
    assert roles["model"] is Role.MODULE
    assert roles["loader"] is Role.DATA
    assert roles["optimizer"] is Role.OPTIMIZER
    assert roles["make_batch"] is Role.CALLABLE
    assert "log" not in roles


# -- paths through whole programs -----------------------------------------------------------


def _codes(source: str, path: str | None = None) -> list[tuple[int, str]]:
    return [(d.span.start.row, d.code) for d in analyze(source, path=path)]


def test_a_branch_and_the_same_test_later_are_correlated() -> None:
    source = _program("""
        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with_prior = True
        for step in range(3):
            pred = model(torch.randn(8, 4))
            if with_prior:
                pred, prior = torch.chunk(pred, 2)
                prior_loss = prior.pow(2).mean()
            loss = pred.pow(2).mean()
            if with_prior:
                loss = loss + prior_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    assert _codes(source) == []


def test_a_backward_under_a_condition_then_the_real_one_is_found_with_its_condition() -> None:
    source = _program("""
        def probe(loss, model):
            loss.backward()
            return sum(p.grad.norm() for p in model.parameters())

        def train(model, loader, optimizer, log_every):
            model.train()
            for step, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                if step % log_every == 0:
                    print(probe(loss, model))
                loss.backward()
                optimizer.step()
        """)
    found = analyze(source)
    assert [(d.span.start.row, d.code) for d in found] == [(15, "GG001")]
    assert "`step % log_every == 0`" in found[0].message


_STREAM_LEARNER = """
    class StreamLearner:
        def __init__(self, net):
            self.net = net
            self.optim = torch.optim.SGD(net.parameters(), lr=0.1)
            self.state = torch.zeros(2, 8)

        def step(self, frame, target=None):
            score, self.state = self.net(frame, self.state)
            if target is not None:
                self.optim.zero_grad()
                F.mse_loss(score, target).backward()
                self.optim.step()
                DETACH
            return score.detach()

    def run(net, frames, targets, every):
        learner = StreamLearner(net)
        for i, frame in enumerate(frames):
            learner.step(frame, targets[i] if i % every == 0 else None)
    """


@pytest.mark.parametrize(("detach", "expected"), [("pass", [(15, "GG003")]), ("self.state = self.state.detach()", [])])
def test_a_backward_under_a_test_of_a_called_method_keeps_the_caller_s_paths_apart(
        detach: str, expected: list[tuple[int, str]]) -> None:
    """The test of a branch a called method runs once per call (`if target is not None:` over its
    parameter) is gone when the call returns, but the caller's statement is run once per arm when an
    arm frees a graph: the iterations after the update and after the other arm stay apart, so the
    state carried through `self.state` is met freed by the next update (and not once it is detached)."""
    source = _program(_STREAM_LEARNER.replace("DETACH", detach))
    assert [(d.span.start.row, d.code) for d in analyze(source)] == expected


@pytest.mark.parametrize(("detach", "expected"), [("pass", [(12, "GG003")]), ("h = h.detach()", [])])
def test_a_backward_under_a_test_no_atom_names_keeps_the_paths_apart(
        detach: str, expected: list[tuple[int, str]]) -> None:
    """`if torch.rand(1).item() < p:` calls: no condition atom names it, and no later test is tied to
    it, but the arm that frees still separates what follows it from the other arm's paths."""
    source = _program(f"""
        model = nn.GRUCell(3, 16)
        head = nn.Linear(16, 2)
        h = torch.zeros(1, 16)
        for t in range(80):
            h = model(torch.randn(1, 3), h)
            if torch.rand(1).item() < 0.5:
                loss = head(h).sum()
                loss.backward()
                {detach}
        """)
    assert [(d.span.start.row, d.code) for d in analyze(source)] == expected


def test_a_while_loop_keeps_the_history_of_its_own_freeing_arm() -> None:
    """The same freeing arm under a `while` loop inside an epoch loop: the `while` loop remembers the
    arm its previous iteration took (and leaves the epoch loop's history alone)."""
    source = _program("""
        model = nn.GRUCell(3, 16)
        head = nn.Linear(16, 2)
        for epoch in range(3):
            h = torch.zeros(1, 16)
            t = 0
            while t < 80:
                h = model(torch.randn(1, 3), h)
                if torch.rand(1).item() < 0.5:
                    loss = head(h).sum()
                    loss.backward()
                t += 1
        """)
    assert [d.code for d in analyze(source)] == ["GG003"]


def test_an_optimizer_step_with_no_backward_since_its_reset_changes_nothing() -> None:
    """`zero_grad()` leaves the gradients None: the step of an iteration that skipped its backward
    updates no parameter, so the graph carried from that iteration was not changed in place (the
    previous iteration's graph is still the GG003 it always was, and no GG011)."""
    source = _program("""
        model = nn.GRUCell(3, 16)
        head = nn.Linear(16, 2)
        optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
        h = torch.zeros(1, 16)
        for t in range(80):
            h = model(torch.randn(1, 3), h)
            loss = head(h).sum()
            optimizer.zero_grad()
            if torch.rand(1).item() < 0.5:
                loss.backward()
            optimizer.step()
        """)
    assert [d.code for d in analyze(source)] == ["GG003"]
    joined = State(), State()
    joined[0].unfilled, joined[1].unfilled = frozenset({"optimizer", "opt_d"}), frozenset({"optimizer"})
    state = State.join_all(list(joined))
    assert state is not None and state.unfilled == frozenset({"optimizer"})


@pytest.mark.parametrize(("clear", "expected"), [("", ["GG003"]), ("self.policy_old.clear()", [])])
def test_two_objects_of_one_class_keep_their_attributes_apart(clear: str, expected: list[str]) -> None:
    """`self.policy` and `self.policy_old` are two objects of one class, each with its own list: clearing
    one leaves the other's log-probabilities, graphs and all, for the next update (ppo-pytorch)."""
    source = _program(f"""
        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 2)
                self.logprobs = []

            def act(self, x):
                logp = self.net(x).log_softmax(-1)[0]
                self.logprobs.append(logp)
                return logp

            def clear(self):
                del self.logprobs[:]

        class PPO:
            def __init__(self):
                self.policy = Policy()
                self.policy_old = Policy()
                self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-3)

            def update(self, states):
                old = torch.stack(self.policy_old.logprobs)
                new = torch.stack([self.policy.act(s) for s in states])
                loss = (new.sum() - old.sum()).pow(2)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.policy.clear()
                {clear}

        ppo = PPO()
        for episode in range(5):
            states = [torch.randn(4) for _ in range(3)]
            for s in states:
                ppo.policy_old.act(s)
            ppo.update(states)
        """)
    found = analyze(source)
    assert [d.code for d in found] == expected
    assert all("`self.policy_old.logprobs`" in d.message for d in found)


def test_an_object_that_may_be_any_of_several_of_its_class_reads_what_each_holds() -> None:
    """`for m in self.children()` joins `self.fc1` and `self.fc2`, each with attributes of its own:
    the learnable logits any of them holds are read, so masks computed once per epoch are found."""
    source = _program("""
        class MaskedLinear(nn.Linear):
            def __init__(self, n_in, n_out):
                super().__init__(n_in, n_out)
                self.mask_logits = nn.Parameter(torch.full((n_out, n_in), 2.0))

            def soft_mask(self):
                return torch.sigmoid(self.mask_logits)

        class MaskedMLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = MaskedLinear(8, 8)
                self.fc2 = MaskedLinear(8, 2)

            def soft_masks(self):
                return [m.soft_mask() for m in self.children()]

        model = MaskedMLP()
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(3):
            masks = model.soft_masks()
            for step in range(4):
                loss = sum(m.sum() for m in masks)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """)
    assert [d.code for d in analyze(source)] == ["GG006"]


def test_zip_keeps_each_iterable_s_items_at_their_position() -> None:
    """`for new, old in zip(new_logps, old_logps)`: `new` holds only what the first list holds, so
    the old policy's graph, cut by `old.item()`, is not reached by the loss (PPO-PyTorch's fix)."""
    source = _program("""
        policy, policy_old = nn.Linear(4, 2), nn.Linear(4, 2)
        optimizer = torch.optim.Adam(policy.parameters())
        states = [torch.randn(4) for _ in range(5)]
        old_logps = [policy_old(s).log_softmax(-1)[0] for s in states]
        for epoch in range(4):
            new_logps = [policy(s).log_softmax(-1)[0] for s in states]
            loss = 0
            for new, old in zip(new_logps, old_logps):
                loss = loss - torch.exp(new - old.item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """)
    assert _codes(source) == []


def test_a_loop_left_when_its_test_turns_false_does_not_run_again() -> None:
    source = _program("""
        from torch.distributions import Categorical
        policy = nn.Linear(4, 2)
        opt = torch.optim.SGD(policy.parameters(), lr=0.1)
        for episode in range(3):
            log_probs, done, t = [], False, 0
            while not done:
                dist = Categorical(logits=policy(torch.randn(4)))
                log_probs.append(dist.log_prob(dist.sample()))
                t += 1
                done = t >= 5
                if done:
                    loss = -torch.stack(log_probs).sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
        """)
    assert _codes(source) == []


def test_a_value_unbound_on_a_path_makes_that_path_impossible() -> None:
    source = _program("""
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--loss", default="l2", choices=["l2", "huber"])
        args = parser.parse_args()
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            pred, target = model(torch.randn(8, 4)), torch.randn(8, 1)
            if args.loss == "l2":
                loss = (pred - target).pow(2).mean()
            elif args.loss == "huber":
                loss = torch.sqrt((pred - target) ** 2 + 1e-3).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    assert _codes(source) == []



def test_placement_gives_the_if_arms_and_loops_around_each_statement() -> None:
    """What tells that `spk` is bound only when `num_return == 2` (inside the loop): on the other
    path the first iteration stops with a NameError. The behaviour is tested by the TBPTT program of
    `test_a_loop_whose_partitions_overflow_reaches_a_fixed_point`."""
    module = cst.parse_module(textwrap.dedent("""\
        def tbptt(net, data, num_return, time_var):
            for step in range(4):
                if num_return == 2:
                    if time_var:
                        spk = net(data[step])
                    else:
                        spk = net(data)
                print(spk)
        """))
    function = module.body[0]
    where = placement(function)
    loop = function.body.body[0]
    outer_if = loop.body.body[0]
    inner_if = outer_if.body.body[0]
    assignment = inner_if.body.body[0]
    assert [truth for _, truth in where.guards[assignment]] == [True, True]
    assert where.loops[assignment] == (loop,)
    assert where.loops[loop] == ()


def test_a_loop_whose_partitions_overflow_reaches_a_fixed_point() -> None:
    """More loop-invariant flags than partitions (snntorch's TBPTT): the conditions forgotten once
    stay forgotten for the loop, so its passes stop changing and the truncation is not mistaken for
    one that keeps the previous graph."""
    source = _program("""
        def tbptt(net, loader, opt, criterion, num_return, time_var, time_first, loss_spk,
                  regularization, reg_spk, k):
            step_trunc = 0
            loss_trunc = 0
            spk_rec, mem_rec = [], []
            for data, targets in loader:
                for step in range(10):
                    if num_return == 2:
                        if time_var:
                            if time_first:
                                spk, mem = net(data[step])
                            else:
                                spk, mem = net(data.transpose(1, 0)[step])
                        else:
                            spk, mem = net(data)
                    elif num_return == 3:
                        if time_var:
                            spk, _, mem = net(data[step])
                        else:
                            spk, _, mem = net(data)
                    spk_rec.append(spk)
                    mem_rec.append(mem)
                    step_trunc += 1
                    if step_trunc == k:
                        spk_rec = torch.stack(spk_rec)
                        mem_rec = torch.stack(mem_rec)
                        if loss_spk:
                            loss = criterion(spk_rec, targets)
                        else:
                            loss = criterion(mem_rec, targets)
                        if regularization:
                            if reg_spk:
                                loss += regularization(spk_rec)
                            else:
                                loss += regularization(mem_rec)
                        loss_trunc += loss
                        opt.zero_grad()
                        loss_trunc.backward()
                        opt.step()
                        step_trunc = 0
                        loss_trunc = 0
                        spk_rec, mem_rec = [], []
        """)
    result = analyze_file(source)
    assert [d.code for d in result.diagnostics] == []
    assert result.incomplete == ()
    # Without the reset, each truncation's backward reaches the items of the ones before.
    buggy = re.sub(r"(loss_trunc = 0\n)\s*spk_rec, mem_rec = \[\], \[\]\n", r"\1", source)
    assert buggy != source
    assert {d.code for d in analyze_file(buggy).diagnostics} & {"GG002", "GG003"}



def test_a_value_read_before_a_call_that_ages_its_nodes_is_aged_with_them() -> None:
    """`rec.append(net(x))` reads `rec`, then the call evaluates `net(x)` again: the items already in
    `rec` are one iteration older, not the new output. Read with their old ids, the previous
    truncation's freed outputs and the items appended since looked like one tensor."""
    source = _program("""
        def tbptt(net, loader, opt, loss_spk, regularization, k):
            step_trunc = 0
            spk_rec, mem_rec = [], []
            for data in loader:
                for step in range(10):
                    spk_rec.append(net(data))
                    mem_rec.append(net(data))
                    step_trunc += 1
                    if step_trunc == k:
                        spk_rec = torch.stack(spk_rec)
                        mem_rec = torch.stack(mem_rec)
                        if loss_spk:
                            loss = spk_rec.sum()
                        else:
                            loss = mem_rec.sum()
                        if regularization:
                            loss = loss + mem_rec.sum()
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        step_trunc = 0
                        spk_rec, mem_rec = [], []
        """)
    assert _codes(source) == []



def test_the_origin_of_a_node_made_on_both_arms_of_a_branch_keeps_both_arms_reads() -> None:
    """Origins are shared by every path: the discriminator's input read on one arm's path must not
    hide the other arm's, or the backward of that path finds no variable that carried the stale
    graph (GG002 "through the loss" instead of GG005 through `fake`)."""
    source = _program("""
        import sys
        G, D = nn.Linear(4, 4), nn.Linear(4, 1)
        opt_g = torch.optim.Adam(G.parameters())
        opt_d = torch.optim.Adam(D.parameters())
        conditional = "--conditional" in sys.argv
        for step in range(3):
            z = torch.randn(8, 4)
            if conditional:
                fake = G(z + 1)
            else:
                fake = G(z)
            d_loss = D(torch.randn(8, 4)).mean() - D(fake).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = D(fake).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        """)
    found = analyze_file(source).diagnostics
    assert [d.code for d in found] == ["GG005"]
    assert "`fake`" in found[0].message


def test_a_retained_graph_is_needed_only_by_a_later_backward_of_its_own_path() -> None:
    """The forward under a flag: each arm's backward retains its graph, and no later backward of the
    same path goes through it (the sibling arm's backward of the same iteration is no later one)."""
    source = _program("""
        import sys
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        wide = "--wide" in sys.argv
        for step in range(3):
            x = torch.randn(8, 4)
            if wide:
                out = model(x * 2)
            else:
                out = model(x)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        """)
    assert [d.code for d in analyze_file(source).diagnostics] == ["GG009"]


def test_nested_loops_reach_a_fixed_point() -> None:
    source = _program("""
        model = nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for a in range(3):
                for b in range(3):
                    for c in range(3):
                        total = 0
                        for q in range(2):
                            for v in range(2):
                                if v == q:
                                    continue
                                total += model(torch.randn(2, 4)).mean()
                        opt.zero_grad()
                        total.backward()
                        opt.step()
        """)
    result = analyze_file(source)
    assert result.diagnostics == ()
    assert result.incomplete == ()


# -- unseen arguments and objects -----------------------------------------------------------


def test_a_training_function_whose_caller_is_not_seen_is_analysed() -> None:
    source = _program("""
        def train(model, loader, optimizer):
            hidden = model.init_hidden(8)
            for x, y in loader:
                optimizer.zero_grad()
                out, hidden = model(x, hidden)
                loss = F.cross_entropy(out, y)
                loss.backward()
                optimizer.step()
        """)
    assert _codes(source) == [(11, "GG003")]


def test_a_trainer_holding_its_model_on_self_is_analysed() -> None:
    source = _program("""
        class Trainer:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def fit(self, loader):
                for x, y in loader:
                    out = self.model(x)
                    self.optimizer.zero_grad()
                    F.mse_loss(out, y).backward()
                    out.pow(2).mean().backward()
                    self.optimizer.step()
        """)
    assert _codes(source) == [(15, "GG002")]



_UNSEEN_POLICY = """
    import gym_like
    policy = gym_like.make_policy("cartpole")
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(3):
        for t in range(5):
            probs = policy(torch.randn(1, 4))
            action = torch.multinomial(probs, 1)
            policy.saved_log_probs.append(torch.log(probs[0, action]))
        loss = -torch.cat(policy.saved_log_probs).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        RESET
    """


def test_a_list_kept_on_an_object_whose_class_is_not_seen_is_followed() -> None:
    """REINFORCE with the policy built by a library the analysis does not read: the log-probabilities
    appended to `policy.saved_log_probs` and never cleared reach the previous episode's graph."""
    found = _codes(_program(_UNSEEN_POLICY.replace("RESET", "pass")))
    assert [code for _, code in found] == ["GG003"]
    assert _codes(_program(_UNSEEN_POLICY.replace("RESET", "del policy.saved_log_probs[:]"))) == []
    # A method of the unseen object may empty it: nothing is known of the list after it.
    assert _codes(_program(_UNSEEN_POLICY.replace("RESET", "policy.finish_episode()"))) == []



def test_chains_of_unseen_objects_under_an_instance_are_keyed_by_its_class() -> None:
    state = State()
    first = ClassInfo(cst.ClassDef(cst.Name("A2C"), cst.IndentedBlock([])), "A2C")
    second = ClassInfo(cst.ClassDef(cst.Name("PPO"), cst.IndentedBlock([])), "PPO")
    state.frames[0]["self"] = Value(Kind.INSTANCE, ref=first)
    state.frames[0]["memory"] = UNKNOWN
    assert state.opaque_key("self.memory.states") == (OPAQUE, "A2C.memory.states")
    assert state.opaque_key("memory.states") == (OPAQUE, "memory.states")
    state.frames[0]["self"] = Value(Kind.INSTANCE, ref=second)
    assert state.opaque_key("self.memory.states") == (OPAQUE, "PPO.memory.states")


def test_a_function_argument_only_called_before_the_loop_builds_no_graph() -> None:
    source = _program("""
        def fit(model, make_loader, epochs):
            loader = make_loader(32)
            for epoch in range(epochs):
                for batch in loader:
                    model(batch).mean().backward()
        """)
    assert _codes(source) == []


# -- project modules ------------------------------------------------------------------------


MODELS = """\
import torch
from torch import nn


class RNNModel(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.rnn = nn.GRU(n, n)
        self.head = nn.Linear(n, n)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        return self.head(out)


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)
"""

STATEFUL_TRAIN = """\
import torch
import torch.nn.functional as F
from {module} import RNNModel

model = RNNModel(8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(5, 2, 8)
    loss = F.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

DETACHED_TRAIN = """\
import torch
from torch import nn
from models import repackage_hidden

rnn = nn.LSTM(8, 8)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
for step in range(10):
    hidden = repackage_hidden(hidden)
    out, hidden = rnn(torch.randn(5, 2, 8), hidden)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_model_class_in_the_module_beside_the_script_is_followed(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODELS)
    script = tmp_path / "train.py"
    script.write_text(STATEFUL_TRAIN.format(module="models"))
    result = analyze_file(script.read_text(), path=str(script))
    assert [(d.span.start.row, d.code) for d in result.diagnostics] == [(11, "GG003")]
    assert [Path(p).name for p, _ in result.dependencies] == ["models.py"]


def test_a_package_module_imported_relatively_is_followed(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .models import RNNModel\n")
    (package / "models.py").write_text(MODELS)
    script = package / "train.py"
    script.write_text(STATEFUL_TRAIN.format(module=".models").replace("from .models", "from .models"))
    assert _codes(script.read_text(), str(script)) == [(11, "GG003")]
    through_package = tmp_path / "run.py"
    through_package.write_text(STATEFUL_TRAIN.format(module="pkg"))
    assert _codes(through_package.read_text(), str(through_package)) == [(11, "GG003")]


def test_a_detaching_helper_imported_from_another_module_detaches(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODELS)
    script = tmp_path / "train.py"
    script.write_text(DETACHED_TRAIN)
    assert _codes(DETACHED_TRAIN, str(script)) == []


def test_a_module_that_does_not_parse_or_does_not_exist_is_no_error(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text("def broken(:\n")
    script = tmp_path / "train.py"
    script.write_text(STATEFUL_TRAIN.format(module="models"))
    assert _codes(script.read_text(), str(script)) == []
    missing = tmp_path / "other.py"
    missing.write_text(STATEFUL_TRAIN.format(module="nowhere"))
    assert _codes(missing.read_text(), str(missing)) == []


def test_libraries_are_never_read_from_the_project_even_under_their_own_name(tmp_path: Path) -> None:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("def backward(x):\n    pass\n")
    project = Project(str(tmp_path / "train.py"))
    assert project.module("torch") is None


def test_a_src_layout_without_a_project_file_is_found_from_a_script_folder(tmp_path: Path) -> None:
    """A checkout whose package is installed with `pip install -e .` and whose project file is not
    there (torchgfn's `scripts/train.py` importing `gfn` from `src/gfn`)."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "buffer.py").write_text("class Buffer:\n    pass\n")
    (tmp_path / "scripts").mkdir()
    project = Project(str(tmp_path / "scripts" / "train.py"))
    found = project.module("pkg.buffer")
    assert found is not None and found.path == str(tmp_path / "src" / "pkg" / "buffer.py")


def test_branches_are_compared_only_between_calls_of_one_function_of_this_file(tmp_path: Path) -> None:
    """`guarded_apart` (retain_graph instead of a sum) reads the branches around both calls; a freeing
    call in another module's helper has none to compare, so the evidence does not claim it."""
    from gradguard.rules import evidence

    (tmp_path / "helpers.py").write_text(textwrap.dedent("""\
        def fit_head(features, head, target):
            loss = (head(features) - target).pow(2).mean()
            loss.backward()
            return loss
        """))
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import torch
        from torch import nn
        from helpers import fit_head

        trunk, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
        for step in range(4):
            features = torch.tanh(trunk(torch.randn(8, 4)))
            fit_head(features, head_a, torch.randn(8, 1))
            if step % 2 == 0:
                head_b(features).sum().backward()
        """))
    facts = facts_for(script.read_text(), path=str(script))
    assert facts is not None and facts.conflicts
    assert all(not evidence(facts, conflict).guarded_apart for conflict in facts.conflicts)


def test_facts_of_a_file_name_the_freeing_call_in_another_module(tmp_path: Path) -> None:
    (tmp_path / "losses.py").write_text(textwrap.dedent("""\
        import torch.nn.functional as F


        def step_loss(pred, target):
            loss = F.mse_loss(pred, target)
            loss.backward()
            return loss
        """))
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import torch
        from torch import nn
        from losses import step_loss

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = step_loss(model(torch.randn(8, 4)), torch.randn(8, 1))
            loss.backward()
            opt.step()
        """))
    facts = facts_for(script.read_text(), path=str(script))
    assert facts is not None
    found = analyze(script.read_text(), path=str(script))
    assert [(d.span.start.row, d.code) for d in found] == [(9, "GG001")]
    assert "losses.py:6" in found[0].message


# -- optimizer steps ------------------------------------------------------------------------------


def test_a_retained_graph_through_a_stepped_module_is_found() -> None:
    source = _program("""
        def update(actor, critic, actor_opt, critic_opt, batches):
            for s, target in batches:
                q = critic(torch.cat([s, actor(s)], dim=1))
                critic_loss = F.mse_loss(q, target)
                critic_opt.zero_grad()
                critic_loss.backward(retain_graph=True)
                critic_opt.step()
                actor_loss = -q.mean()
                actor_opt.zero_grad()
                actor_loss.backward()
                actor_opt.step()
        """)
    assert _codes(source) == [(14, "GG011")]


def test_a_correct_gan_step_with_optimizers_of_unseen_modules_is_clean() -> None:
    source = _program("""
        def train(netG, netD, loader, optG, optD):
            for real in loader:
                fake = netG(torch.randn(8, 16))
                optD.zero_grad()
                lossD = F.softplus(netD(fake.detach())).mean() + F.softplus(-netD(real)).mean()
                lossD.backward()
                optD.step()
                optG.zero_grad()
                lossG = F.softplus(-netD(fake)).mean()
                lossG.backward()
                optG.step()
        """)
    assert _codes(source) == []


def test_a_step_of_another_module_leaves_a_retained_graph_valid() -> None:
    source = _program("""
        encoder, head_a, head_b = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)
        opt_a = torch.optim.SGD(head_a.parameters(), lr=0.1)
        opt_b = torch.optim.SGD([*encoder.parameters(), *head_b.parameters()], lr=0.1)
        for step in range(3):
            z = encoder(torch.randn(8, 4)).detach()
            loss_a = head_a(z).mean()
            loss_a.backward(retain_graph=True)
            opt_a.step()
            loss_b = head_b(encoder(torch.randn(8, 4))).mean()
            loss_b.backward()
            opt_b.step()
        """)
    assert [code for _, code in _codes(source)] == ["GG009"]  # the retain is needless, not wrong


# -- call context, budgets, definitions -----------------------------------------------------------


def test_one_helper_evaluated_for_two_calls_is_two_sites() -> None:
    """`model.get_state()` evaluated in the loop and again inside a loss helper: the helper's call
    does not make the loop's state look like an older evaluation of the same expression, so the
    step between the two backwards is still seen (option-critic's in-place bug)."""
    source = _program("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
                self.head = nn.Linear(8, 2)

            def get_state(self, obs):
                return self.features(obs)

        def actor_loss(model, obs, logp):
            state = model.get_state(obs)
            return -(logp * model.head(state).mean()).mean()

        model = Net()
        optim = torch.optim.SGD(model.parameters(), lr=0.1)
        state = model.get_state(torch.randn(1, 4))
        for step in range(10):
            logp = model.head(state).log_softmax(-1)
            state = model.get_state(torch.randn(1, 4))
            loss = actor_loss(model, torch.randn(1, 4), logp)
            optim.zero_grad()
            loss.backward()
            optim.step()
    """)
    assert ("GG011", 26) in [(code, row) for row, code in _codes(source)]


def test_functions_still_find_each_other_when_the_module_run_is_cut_short(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's own run exhausts its budget: the functions analysed as entries still see the
    module's definitions (a detaching helper is a helper, not an unknown call carrying graphs)."""
    from gradguard.analysis.expressions import BudgetExceeded
    from gradguard.analysis.program import Program

    source = _program("""
        def repackage(h):
            return h.detach()

        def train(model, loader, optimizer):
            hidden = torch.zeros(2, 8)
            for x in loader:
                hidden = repackage(hidden)
                out, hidden = model(x, hidden)
                loss = out.sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        if __name__ == "__main__":
            train(nn.RNN(4, 8), [torch.randn(3, 2, 4)], None)
    """)
    assert _codes(source) == []
    original = Program.exec_block

    def cut_short(self, body, state, frame, owner):  # type: ignore[no-untyped-def]
        if owner is self.module:
            raise BudgetExceeded
        return original(self, body, state, frame, owner)

    monkeypatch.setattr(Program, "exec_block", cut_short)
    analysis = analyze_file(source)
    assert [d.code for d in analysis.diagnostics] == []
    assert any("module level" in note.message for note in analysis.incomplete)


_COSTLY = """
    def costly(data):
        x = w * 1
        for a in data:
            for b in data:
                for c in data:
                    if a:
                        x = x * 2
                    elif b:
                        x = torch.tanh(x)
                    if c:
                        x = x.detach()
        return x
"""
_DOUBLE = """
    def train():
        loss = (w * 2).sum()
        loss.backward()
        loss.backward()
"""


def _small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradguard.analysis.program import Program

    monkeypatch.setattr(Program, "max_steps", 40)
    monkeypatch.setattr(Program, "steps_per_line", 0)


@pytest.mark.parametrize("order", ["costly first", "costly last"])
def test_one_costly_function_does_not_starve_another(monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    """Each entry point has a budget of its own: the double backward of `train()` is found whether
    the function that uses up its budget comes before it or after it, and that one is noted at its
    first statement past the budget."""
    _small_budget(monkeypatch)
    parts = [_COSTLY, _DOUBLE] if order == "costly first" else [_DOUBLE, _COSTLY]
    source = _program("w = torch.randn(3, requires_grad=True)\n" + "".join(textwrap.dedent(p) for p in parts))
    analysis = analyze_file(source)
    lines = source.splitlines()
    backward = max(i for i, line in enumerate(lines, 1) if "loss.backward()" in line)
    assert [(d.code, d.span.start.row) for d in analysis.diagnostics] == [("GG001", backward)]
    loop = next(i for i, line in enumerate(lines, 1) if "for a in data" in line)
    assert [(n.message, n.row) for n in analysis.incomplete] == [
        ("analysis incomplete in costly(): step budget exhausted", loop)]


@pytest.mark.parametrize("order", ["costly first", "costly last"])
def test_a_costly_module_statement_is_skipped_and_the_module_goes_on(
        monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    """At module level too: a loop nest that uses up its budget is skipped (its targets unknown),
    and a plain double backward after it, or before it, is found all the same."""
    _small_budget(monkeypatch)
    costly = textwrap.dedent("""
        x = w * 1
        for a in data:
            for b in data:
                for c in data:
                    if a:
                        x = x * 2
                    elif b:
                        x = torch.tanh(x)
                    if c:
                        x = x.detach()
    """)
    double = "loss = (w * 2).sum()\nloss.backward()\nloss.backward()\n"
    body = costly + double if order == "costly first" else double + costly
    source = _program("w = torch.randn(3, requires_grad=True)\ndata = [1, 0]\n" + body)
    analysis = analyze_file(source)
    lines = source.splitlines()
    backward = max(i for i, line in enumerate(lines, 1) if "loss.backward()" in line)
    assert [(d.code, d.span.start.row) for d in analysis.diagnostics] == [("GG001", backward)]
    loop = next(i for i, line in enumerate(lines, 1) if "for a in data" in line)
    assert [(n.message, n.row) for n in analysis.incomplete] == [
        ("analysis incomplete in module level: step budget exhausted", loop)]


def test_what_a_skipped_statement_assigns_is_unknown_not_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """A skipped loop that detaches the state it carries: after it the state is unknown, so the
    backward through it is not taken for one through the graph freed before the loop."""
    _small_budget(monkeypatch)
    source = _program("""
        w = torch.randn(3, requires_grad=True)
        data = [1, 0]
        h = w * 2
        h.sum().backward()
        for a in data:
            for b in data:
                for c in data:
                    if a:
                        h = h.detach()
                    elif b:
                        h = torch.tanh(h)
                    if c:
                        h = h * 2
        h.sum().backward()
    """)
    analysis = analyze_file(source)
    assert [d.code for d in analysis.diagnostics] == []
    assert [n.message for n in analysis.incomplete] == ["analysis incomplete in module level: step budget exhausted"]


_TOGGLED_CRITIC = """
    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Linear(4, 1)

        def forward(self, x):
            return self.main(x)


    class WGAN:
        def __init__(self):
            self.D = Critic()
            self.G = nn.Linear(2, 4)
            self.d_optimizer = torch.optim.RMSprop(self.D.parameters(), lr=5e-5)

        def train(self, loader):
            one = torch.FloatTensor([1])
            for g_iter in range(10):
                for p in self.D.parameters():
                    p.requires_grad = True
                for d_iter in range(5):
                    images = next(loader)
                    d_loss_real = self.D(images).mean(0).view(1)
                    d_loss_real.backward(one)
                    self.d_optimizer.step()
                for p in self.D.parameters():
                    p.requires_grad = False
                g_loss = self.D(self.G(torch.randn(8, 2))).mean().view(1)
                g_loss.backward(one * -1)
"""


def test_a_critic_frozen_for_the_generator_step_and_unfrozen_for_its_own_trains_again() -> None:
    """Freezing is a fact of the path for a module the program also unfreezes (WGAN critics,
    `set_requires_grad(nets, flag)`): the critic's forward at the top of the next iteration builds
    graph again, so its backward is a tensor's, not an unknown object's (Zeleni9/pytorch-wgan)."""
    assert _codes(_program(_TOGGLED_CRITIC)) == []


def test_a_module_frozen_and_never_unfrozen_stays_frozen_everywhere() -> None:
    """A frozen VAE set up in one method stays frozen in the method that trains: its encoder's
    output carries no graph, so backwarding a loss of it twice is not flagged as a freed graph."""
    source = _program("""
        class Trainer:
            def __init__(self):
                self.vae = nn.Linear(4, 4)
                self.unet = nn.Linear(4, 4)

            def setup(self):
                self.vae.requires_grad_(False)

            def step(self, x):
                latents = self.vae(x)
                loss = self.unet(latents).pow(2).mean()
                loss.backward()
                recon = latents.pow(2).mean()
                recon.backward()
    """)
    assert [code for _, code in _codes(source)] == []


_STATEFUL_NET = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.h = torch.zeros(2, 4)

        def forward(self, x):
            self.h = torch.tanh(self.fc(x) + self.h)
            return self.h


    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        CALL
        out = net(torch.randn(2, 4))
        loss = out.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize(("call", "found"), [
    ("unseen.reset_net(net)", False),      # an unseen library may reset what it is given
    ("unseen.tools.reset(net.fc, net)", False),
    ("unseen.log_scalar(step)", True),     # given no project object: it changes none
    ("print(net)", True),                  # a builtin: known to change nothing
    ("torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)", True),  # a known package
])
def test_a_call_without_fact_or_source_may_change_the_objects_it_is_given(call: str, found: bool) -> None:
    source = _program("import unseen\nimport unseen.tools\n" + textwrap.dedent(_STATEFUL_NET).replace("CALL", call))
    assert ("GG003" in [code for _, code in _codes(source)]) is found


def test_retain_variables_is_the_old_name_of_retain_graph() -> None:
    """PyTorch <= 0.3 tutorials keep the graph with `retain_variables=True`: a second backward
    through it is not a freed graph (GG002); a step in between still changes what it saved."""
    template = _program("""
        D = nn.Linear(4, 1)
        G = nn.Linear(2, 4)
        opt_D = torch.optim.Adam(D.parameters())
        for step in range(10):
            prob_fake = D(G(torch.randn(8, 2)))
            D_loss = -torch.log(1. - prob_fake).mean()
            opt_D.zero_grad()
            D_loss.backward(KEYWORD=True)
            STEP
            G_loss = torch.log(1. - prob_fake).mean()
            G_loss.backward()
    """)
    for keyword in ("retain_graph", "retain_variables"):
        assert _codes(template.replace("KEYWORD", keyword).replace("STEP", "pass")) == []
        stepped = _codes(template.replace("KEYWORD", keyword).replace("STEP", "opt_D.step()"))
        assert [code for _, code in stepped] == ["GG011"]


_PER_ITEM = """
    policy = nn.Linear(4, 2)
    opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    for episode in range(3):
        data = []
        SHARED
        for t in range(5):
            prob = FORWARD.softmax(0)
            data.append((1.0, prob[0]))
        opt.zero_grad()
        for r, p in data:
            loss = -torch.log(p) * r
            loss.backward()
        opt.step()
"""


def test_one_backward_per_item_of_a_list_built_by_a_loop_frees_that_item_only() -> None:
    """REINFORCE as minimalRL writes it: each item of `data` comes from its own forward, so the
    backward of one item does not free the next one's graph (03); when the items share a graph
    made once before the list was built, the second item's backward does fail (GG002)."""
    own = _program(_PER_ITEM.replace("SHARED", "pass").replace("FORWARD", "policy(torch.randn(4))"))
    assert _codes(own) == []
    shared = _program(_PER_ITEM.replace("SHARED", "feats = torch.tanh(policy(torch.randn(4)))")
                      .replace("FORWARD", "(feats * t)"))
    assert [code for _, code in _codes(shared)] == ["GG002"]


def test_a_step_after_each_item_s_backward_changes_the_weights_the_next_items_saved() -> None:
    """minimalRL's REINFORCE before its fix: `optimizer.step()` inside the per-item loop. Each item has
    its own graph, but every one of them was built before the first step and saved the weights it
    changes: the second item's backward fails there (GG011, naming the step), not for a freed graph."""
    stepping = _program(_PER_ITEM.replace("SHARED", "pass").replace("FORWARD", "policy(torch.randn(4))")
                        .replace("            loss.backward()\n", "            loss.backward()\n            opt.step()\n"))
    found = analyze(stepping)
    assert [d.code for d in found] == ["GG011"]
    step_line = stepping.splitlines().index("        opt.step()") + 1
    assert f"step at line {step_line}" in found[0].message


def test_past_the_time_limit_the_entry_points_left_are_one_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU-time safety net cuts every entry point still to come: one note names the first and
    counts the others (a file of many methods gets one line, not one per method)."""
    from gradguard.analysis.program import Program

    monkeypatch.setattr(Program, "time_budget", 0.0)
    source = _program("w = torch.randn(3, requires_grad=True)\n" + "".join(
        f"def f{i}():\n    loss = (w * 2).sum()\n    loss.backward()\n    loss.backward()\n" for i in range(4)))
    analysis = analyze_file(source)
    first = source.splitlines().index("def f0():") + 1
    assert [(n.message, n.row) for n in analysis.incomplete] == [
        ("analysis incomplete in f0() and 3 more entry points: time limit (0 CPU-s for the file) reached", first)]


def test_a_loop_split_by_many_flags_reaches_its_fixed_point() -> None:
    """A PPO update loop under several independent flags (`args.clip_vloss`, `args.norm_adv`, ...):
    the paths keep splitting into new partitions, but once widened they hold nothing new together,
    which is a fixed point (cleanrl ppo.py: not converged in 24 passes, 45 CPU-s; now 6 CPU-s)."""
    source = "import argparse\n" + _program('''

        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        agent = nn.Linear(4, 2)
        optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
        obs = torch.zeros(8, 4)
        for iteration in range(1, args.num_iterations + 1):
            if args.anneal_lr:
                optimizer.param_groups[0]["lr"] = 1.0 - iteration / args.num_iterations
            for step in range(8):
                with torch.no_grad():
                    value = agent(obs[step])
                infos = {}
                if "final_info" in infos:
                    print(infos)
            for t in reversed(range(8)):
                if t == 8 - 1:
                    nextvalue = value
                else:
                    nextvalue = value * 0.5
            for epoch in range(args.update_epochs):
                for start in range(0, 8, 2):
                    newvalue = agent(obs[start:start + 2])
                    if args.clip_vloss:
                        v_loss = newvalue.pow(2).mean()
                    else:
                        v_loss = 0.5 * newvalue.pow(2).mean()
                    if args.norm_adv:
                        v_loss = v_loss * 2
                    if args.target_kl is not None:
                        print(args.target_kl)
                    optimizer.zero_grad()
                    v_loss.backward()
                    optimizer.step()
    ''')
    analysis = analyze_file(source)
    assert [d.code for d in analysis.diagnostics] == []
    assert analysis.incomplete == ()


def test_a_grad_call_with_keyword_outputs_names_its_root() -> None:
    source = _program("""
        net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(4, 3, requires_grad=True)
        pred = net(x)
        pred.mean().backward(retain_graph=True)
        opt.step()
        (g,) = torch.autograd.grad(outputs=pred.sum(), inputs=x)
    """)
    (finding,) = [d for d in analyze(source) if d.code == "GG011"]
    assert finding.message.startswith("`pred.sum()` goes through")


def test_an_optimizer_an_instance_builds_over_its_parameters_steps_that_instance_only() -> None:
    """`value.optimizer.step()` changes `value`'s parameters: a graph of `value` built before the
    step fails after it (GG011); one of `target_value`, another instance of the class, does not."""
    template = _program("""
        class ValueNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
                self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)

            def forward(self, state):
                return self.fc(state)

        value = ValueNet()
        target_value = ValueNet()
        for step in range(3):
            state = torch.randn(8, 4)
            v = value(state)
            v_next = target_value(state)
            value.optimizer.zero_grad()
            (v - 1.0).pow(2).mean().backward(retain_graph=True)
            value.optimizer.step()
            later = CARRIER.pow(2).mean()
            later.backward()
    """)
    def errors(source: str) -> list[str]:
        return [d.code for d in analyze(source) if d.severity == "error"]

    assert errors(template.replace("CARRIER", "v_next")) == []
    assert errors(template.replace("CARRIER", "v")) == ["GG011"]


def test_a_dict_literal_keeps_its_entries_apart_by_key() -> None:
    """`{"pi": a, "v": b}["v"]` is `b` alone: a backward through the policy head does not free
    the value head's graph; the same entry backward-ed again still is a finding."""
    template = _program("""
        actor, critic = nn.Linear(4, 2), nn.Linear(4, 1)
        obs = torch.randn(8, 4)
        out = {"pi": actor(obs).log_softmax(-1), "v": critic(obs)}
        out["pi"].mean().backward()
        out[KEY].mean().backward()
    """)
    assert [code for _, code in _codes(template.replace("KEY", '"v"'))] == []
    assert [code for _, code in _codes(template.replace("KEY", '"pi"'))] == ["GG002"]


def test_a_reset_walking_the_module_tree_reaches_each_submodule() -> None:
    """`for m in self.modules(): if hasattr(m, "reset"): m.reset()` runs each object's own
    `reset`: the neuron state it clears carries nothing into the next step; a tree in which
    nothing defines `reset` still carries it."""
    template = _program("""
        class Neuron(nn.Module):
            def __init__(self):
                super().__init__()
                self.v = 0.0

            def forward(self, dv):
                self.v = self.v + dv
                return torch.sigmoid(self.v)

            def RESET(self):
                self.v = 0.0

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc, self.node = nn.Linear(4, 4), Neuron()

            def forward(self, x):
                return self.node(self.fc(x))

            def reset_all(self):
                for m in self.modules():
                    if hasattr(m, "reset"):
                        m.reset()

        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            net(torch.randn(2, 4)).pow(2).mean().backward()
            opt.step()
            net.reset_all()
    """)
    assert _codes(template.replace("RESET", "reset")) == []
    assert [code for _, code in _codes(template.replace("RESET", "clear"))] == ["GG003"]


def test_a_log_is_a_loss_of_the_same_function_appended_in_every_iteration() -> None:
    """GG010 needs the appended value to be what a backward of the same function started from (a
    caller's variable of the same name is another variable), appended on every iteration (under
    `if step == 0:` the list is a buffer filled once)."""
    helper = _program("""
        w = torch.ones(1, requires_grad=True)

        def collision_times(n):
            event_times = []
            t = torch.zeros(1)
            for i in range(n):
                event_t = t + w * 2
                event_times.append(event_t)
                t = event_t
            return event_times

        def gradcheck():
            event_t = collision_times(3)[-1]
            event_t.backward()
    """)
    assert [code for _, code in _codes(helper)] == []
    buffer = _program("""
        model = nn.Linear(4, 4)
        ys = []
        for step in range(3):
            y = model(torch.randn(2, 4)).sum()
            y.backward()
            GUARD
                ys.append(y)
    """)
    assert [code for _, code in _codes(buffer.replace("GUARD", "if step == 0:"))] == []
    assert [code for _, code in _codes(buffer.replace("GUARD", "if step >= 0:"))] == ["GG010"]


# -- containers of modules ------------------------------------------------------------------------

_STACKED = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = {container}

    def forward(self, x, h):
        {loop}
            x = torch.tanh(layer(x) + h)
        return x, x


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
h = torch.zeros(2, 4)
for step in range(3):
    out, h = net(torch.randn(2, 4), h)
    loss = out.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize("container", ["nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])",
                                       "nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))"])
@pytest.mark.parametrize("loop", ["for layer in self.layers:", "for i, layer in enumerate(self.layers):",
                                  "for layer, k in zip(self.layers, range(3)):"])
def test_the_modules_a_container_holds_build_graph_when_iterated(container: str, loop: str) -> None:
    found = analyze(_program(_STACKED.format(container=container, loop=loop)))
    assert [(d.code, d.span.start.row) for d in found] == [("GG003", 23)]


def test_a_class_derived_from_sequential_iterates_its_modules() -> None:
    source = _program("""
        class Stateful(nn.Sequential):
            def forward(self, x, h):
                for layer in self:
                    x = torch.tanh(layer(x) + h)
                return x, x


        net = Stateful(nn.Linear(4, 4), nn.Linear(4, 4))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        h = torch.zeros(2, 4)
        for step in range(3):
            out, h = net(torch.randn(2, 4), h)
            loss = out.pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)
    assert [(d.code, d.span.start.row) for d in analyze(source)] == [("GG003", 19)]


def test_a_module_dict_iterates_its_keys_not_modules() -> None:
    source = _program("""
        heads = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})
        opt = torch.optim.SGD(heads.parameters(), lr=0.1)
        for step in range(3):
            total = 0.0
            for name in heads:
                total = total + heads[name](torch.randn(2, 4)).sum() * len(name)
            opt.zero_grad()
            total.backward()
            opt.step()
    """)
    assert [d for d in analyze(source) if d.severity.name == "ERROR"] == []


def test_a_list_of_optimizers_steps_the_list_of_networks_it_was_built_over() -> None:
    """REDQ-style ensembles: `self.q_opts.append(Adam(self.q_nets[i].parameters()))`; stepping
    every Q optimizer changes in place the weights the policy loss saved through `self.q_nets[i]`."""
    source = _program("""
        class Mlp(nn.Module):
            def __init__(self, i, o):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(i, 16), nn.ReLU(), nn.Linear(16, o))

            def forward(self, x):
                return self.net(x)


        class Agent:
            def __init__(self, num_q=2):
                self.num_q = num_q
                self.policy = Mlp(3, 1)
                self.q_nets = []
                self.q_opts = []
                for q_i in range(num_q):
                    self.q_nets.append(Mlp(4, 1))
                    self.q_opts.append(torch.optim.Adam(self.q_nets[q_i].parameters(), lr=1e-3))
                self.pi_opt = torch.optim.Adam(self.policy.parameters(), lr=1e-3)

            def train(self, obs, act, target):
                q_loss = sum((self.q_nets[i](torch.cat([obs, act], 1)) - target).pow(2).mean()
                             for i in range(self.num_q))
                a = self.policy(obs)
                pi_loss = -torch.cat([self.q_nets[i](torch.cat([obs, a], 1)) for i in range(self.num_q)], 1).mean()
                for i in range(self.num_q):
                    self.q_opts[i].zero_grad()
                q_loss.backward()
                for {loop}:
                    {step}
                self.pi_opt.zero_grad()
                pi_loss.backward()
                self.pi_opt.step()


        agent = Agent()
        for step in range(3):
            agent.train(torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1))
    """)
    for loop, step in (("i in range(self.num_q)", "self.q_opts[i].step()"), ("opt in self.q_opts", "opt.step()")):
        found = analyze(source.replace("{loop}", loop).replace("{step}", step))
        assert [(d.code, d.span.start.row) for d in found] == [("GG011", 36)], loop


def test_a_value_updated_from_itself_only_in_init_is_built_once_not_carried() -> None:
    """deepctr's `self.reg_loss = self.reg_loss + reg` in a helper of `__init__`: computed once
    before the training loop (GG006), not state the loop carries (GG003) or a shared forward (GG002)."""
    source = _program("""
        class Base(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.lin = nn.Linear(dim, 1)
                self.reg_loss = torch.zeros((1,))
                self.add_regularization_loss(self.lin.parameters(), 1e-3)

            def add_regularization_loss(self, weight_list, weight_decay):
                reg = torch.zeros((1,))
                for w in weight_list:
                    reg = reg + torch.norm(w, p=2)
                self.reg_loss = self.reg_loss + weight_decay * reg

            def forward(self, x):
                return self.lin(x)

            def fit(self, x, y, epochs=2):
                opt = torch.optim.SGD(self.parameters(), lr=0.1)
                for epoch in range(epochs):
                    loss = (self(x) - y).pow(2).mean()
                    total_loss = loss + self.reg_loss
                    opt.zero_grad()
                    total_loss.backward()
                    opt.step()
    """)
    assert [(d.code, d.span.start.row) for d in analyze(source)] == [("GG006", 27)]


def test_a_function_of_a_project_module_sees_that_module_s_own_classes_and_functions(tmp_path: Path) -> None:
    """pytorch-CycleGAN-style factories: `networks.define_net()` builds `Recurrent(...)` and hands it
    to `init_net(net)`, both defined in `networks.py` itself (the linted file's globals are not its
    globals). Only a model that follows them sees the state the module keeps across calls."""
    (tmp_path / "networks.py").write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Recurrent(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.cell = nn.Linear(n, n)
                self.h = torch.zeros(1, n)

            def forward(self, x):
                self.h = torch.tanh(self.cell(x) + self.h)
                return self.h


        def init_net(net):
            return net


        def define_net(n):
            return init_net(Recurrent(n))
    """))
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import torch
        import networks

        Recurrent = None  # a name of the linted file that the module's code must not see
        net = networks.define_net(4)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for step in range(3):
            loss = net(torch.randn(1, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """))
    assert _codes(script.read_text(), str(script)) == [(10, "GG003")]


# -- bound methods and lists of objects ------------------------------------------------------------


@pytest.mark.parametrize("make", ["tracker = Tracker(); trackers = [tracker]", "trackers = [Tracker()]"])
def test_a_method_taken_from_an_object_runs_on_that_object(make: str) -> None:
    """`remember = tracker.keep` called later, and a list literal of objects read back by index:
    the attribute the method sets is the object's, so the graph kept there is found stale."""
    source = _program(f'''
        class Tracker:
            def __init__(self):
                self.last = None

            def keep(self, value):
                self.last = value


        def train(model, loader, opt):
            {make}
            remember = trackers[0].keep
            for x, y in loader:
                out = model(x)
                if trackers[0].last is not None:
                    out = out + trackers[0].last
                loss = F.mse_loss(out, y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                remember(out)
    ''')
    assert [d.code for d in analyze(source)] == ["GG003"]
    assert [d.code for d in analyze(source.replace("remember(out)", "remember(out.detach())"))] == []


_RECORDER = '''
    class FeatureRecorder:
        def __init__(self, model, layer_names):
            self.features = {}
            modules = dict(model.named_modules())
            for name in layer_names:
                modules[name].register_forward_hook(self._make_hook(name))

        def _make_hook(self, name):
            def hook(module, inputs, output):
                self.features[name] = output
            return hook


    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
    recorder = FeatureRecorder(model, ["1", "3"])
    anchor_x = torch.randn(64, 16)
    ANCHOR
    anchor_feats = dict(recorder.features)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(20):
        logits = model(torch.randn(32, 16))
        model(anchor_x)
        drift = sum(F.mse_loss(recorder.features[name], anchor_feats[name]) for name in anchor_feats)
        loss = logits.mean() + drift
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''


@pytest.mark.parametrize(("anchor", "expected"), [("model(anchor_x)", ["GG006"]),
                                                  ("with torch.no_grad():\n        model(anchor_x)", [])])
def test_a_closure_made_by_a_method_keeps_what_it_captured_when_it_runs_later(anchor: str, expected: list[str]) -> None:
    """A hook made by `self._make_hook(name)` runs at every forward, long after `_make_hook` returned:
    it still writes `self.features[name]` of that recorder, one entry per name, each forward anew."""
    source = _program(_RECORDER).replace("ANCHOR", anchor)
    assert [d.code for d in analyze(source)] == expected


def test_a_fake_batch_concatenated_before_the_discriminator_is_where_it_entered_it() -> None:
    """pix2pix: `fake_AB = torch.cat((real_A, fake_B), 1)` feeds `netD`; the carrier `fake_B` itself
    never does. The read that fed the stepped discriminator is the concatenation's, and the fix
    detaches it there."""
    source = _program('''
        def train(netG, netD, loader, opt_G, opt_D):
            for real_A, real_B in loader:
                fake_B = netG(real_A)
                opt_D.zero_grad()
                fake_AB = torch.cat((real_A, fake_B), 1)
                loss_D = netD(fake_AB).mean() - netD(torch.cat((real_A, real_B), 1)).mean()
                loss_D.backward()
                opt_D.step()
                opt_G.zero_grad()
                loss_G = -netD(torch.cat((real_A, fake_B), 1)).mean() + F.l1_loss(fake_B, real_B)
                loss_G.backward()
                opt_G.step()
    ''')
    found = analyze(source)
    assert [d.code for d in found] == ["GG005"]
    fixed = found[0].fix
    assert fixed is not None and [e.content for e in fixed.edits] == ["fake_AB.detach()"]


_SETTINGS_GAN = '''
    class Model(nn.Module):
        def initialize(self, opt):
            self.opt = opt
            self.netD = nn.Linear(4, 1)
            self.netG = nn.Linear(4, 4)
            self.optimizer_D = torch.optim.Adam(self.netD.parameters())
            self.wgan_gp = False
            if opt.gan_type == "wgan_gp":
                self.wgan_gp = True

        def set_input(self, x):
            self.real = x

        def forward(self):
            self.fake = self.netG(self.real)

        def backward_D(self):
            self.pred_fake = self.netD(self.fake.detach())
            self.pred_real = self.netD(self.real)
            if self.wgan_gp:
                self.loss_D = self.pred_fake.mean() - self.pred_real.mean()
            else:
                if self.opt.gan_type in ["vanilla", "lsgan"]:
                    self.loss_D = (self.pred_fake ** 2).mean() + ((self.pred_real - 1) ** 2).mean()
                elif self.opt.gan_type == "re_s_gan":
                    self.loss_D = (self.pred_real - self.pred_fake).mean()
            self.loss_D.backward()

        def optimize_parameters(self):
            self.forward()
            for i in range(3):
                self.optimizer_D.zero_grad()
                self.backward_D()
                self.optimizer_D.step()
'''


def test_an_objects_settings_keep_their_truth_from_one_call_of_its_methods_to_the_next() -> None:
    """Shift-Net's critic loop: `self.loss_D` is set in one arm of a chain over `self.opt.gan_type`
    (and the `self.wgan_gp` flag) in every call. A path where no arm set it never had it: it does not
    hold an earlier call's loss, whose graph that call's backward freed."""
    assert [d.code for d in analyze(_program(_SETTINGS_GAN))] == []
    # The same test over something the loop changes keeps no truth: a real stale loss.
    changing = _SETTINGS_GAN.replace("            self.loss_D.backward()",
                                     "            self.loss_D.backward()\n            self.opt.gan_type = 're_s_gan'")
    assert "GG001" in [d.code for d in analyze(_program(changing))]


def test_a_collection_written_out_is_part_of_a_condition_key() -> None:
    assert key_of(_expr('opt.gan_type in ["vanilla", "lsgan"]')) == "(opt.gan_type in ['vanilla', 'lsgan'])"
    assert key_of(_expr("x in (a, 1)")) == "(x in (a, 1))"
    assert key_of(_expr("x in [f(a)]")) is None


def test_a_discriminator_output_kept_for_the_generator_step_is_not_a_fake_batch() -> None:
    """Shift-Net's re_avg_gan: `self.pred_fake`, the discriminator's output from the D step, is read
    again in the G step and goes into a loss module (no parameters): a graph the two losses share
    (GG002), not a generator output fed to a discriminator (GG005, whose fix would detach D's input)."""
    source = _program('''
        class GANLoss(nn.Module):
            def __init__(self):
                super().__init__()
                self.loss = nn.MSELoss()

            def forward(self, pred, real):
                return self.loss(pred, torch.ones_like(pred) if real else torch.zeros_like(pred))


        def train(netG, netD, loader, optimizer_G, optimizer_D):
            criterion = GANLoss()
            for real in loader:
                fake = netG(real)
                optimizer_D.zero_grad()
                pred_fake = netD(fake.detach())
                pred_real = netD(real)
                loss_D = (criterion(pred_real - pred_fake.mean(), True) + criterion(pred_fake - pred_real.mean(), False)) / 2
                loss_D.backward()
                optimizer_D.step()
                optimizer_G.zero_grad()
                pred_real = netD(real)
                loss_G = (criterion(pred_real - pred_fake.mean(), False) + criterion(pred_fake - pred_real.mean(), True)) / 2
                loss_G.backward()
                optimizer_G.step()
    ''')
    assert [d.code for d in analyze(source)] == ["GG002"]


_ENTRIES_PER_STEP = """
    blocks = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})
    head = nn.Linear(8, 1)
    opt = torch.optim.SGD([*blocks.parameters(), *head.parameters()], lr=0.1)
    names = ["a", "b"]
    feats = {}
    for step in range(10):
        x = torch.randn(2, 4)
        for ITEM in SOURCE:
            WRITE
        out = head(torch.cat([feats["a"], feats["b"]], dim=1))
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize(
    ("source", "item", "write", "expected"),
    [
        # The same keys every step: each step's writes replace the entries the last step wrote.
        ("names", "name", "feats[name] = blocks[name](x)", []),
        ('["a", "b"]', "name", "feats[name] = blocks[name](x)", []),
        ("enumerate(names)", "i, name", "feats[name] = blocks[name](x)", []),
        ("blocks.items()", "name, block", "feats[name] = block(x)", []),
        # Written only when missing (a memo): later steps read the first step's graph.
        ("names", "name", "if name not in feats:\n                feats[name] = blocks[name](x)", ["GG003"]),
        # Keys drawn anew each step: entries of earlier steps stay in the dict.
        ("random.sample(names, 1)", "name", "feats[name] = blocks[name](x)", ["GG003"]),
        # The loop variable rebound in the body: the key is no longer the item.
        ("names", "name", "name = name + str(step)\n            feats[name] = blocks['a'](x)", ["GG003"]),
    ],
)
def test_a_dict_entry_written_per_item_of_fixed_items_is_replaced_each_step(
        source: str, item: str, write: str, expected: list[str]) -> None:
    """`for name in names: feats[name] = layer(x)` in every step writes the same entries again:
    what the dict holds after the inner loop is this step's graph only. Keys that may change from one
    step to the next, or entries written only when missing, still carry the earlier steps' graphs."""
    body = _ENTRIES_PER_STEP.replace("SOURCE", source).replace("ITEM", item).replace("WRITE", write)
    source_code = _program("import random\n" + textwrap.dedent(body))
    assert [code for _, code in _codes(source_code) if code != "GG000"] == expected


# -- dicts joined across paths, star imports, datasets of unseen classes ---------------------------


def test_dicts_whose_keys_differ_by_path_keep_every_entry_where_they_meet() -> None:
    encoder, decoder, other = (Value(Kind.MODULE, label=name) for name in ("enc", "dec", "other"))
    left = Value(Kind.DICT, elems=(encoder, decoder), keys=("encoder", "decoder"))
    right = Value(Kind.DICT, elems=(encoder, other), keys=("encoder", "static_decoder"))
    joined = join(left, right)
    assert joined.keys == ("encoder", "decoder", "static_decoder")
    assert joined.elems is not None and [e.label for e in joined.elems] == ["enc", "dec", "other"]


_MODELS_BY_TYPE = """
    import torch
    import torch.nn as nn
    from PACKAGE import Encoder, Decoder


    class Trainer:
        def __init__(self, opt):
            self.opt = opt
            self.models = {}
            self.models["encoder"] = Encoder()
            if self.opt.type == "both":
                self.models["static_decoder"] = Decoder()
                self.models["dynamic_decoder"] = Decoder()
            else:
                self.models["decoder"] = Decoder()
                self.models["discriminator"] = nn.Linear(2, 1)
            params, params_d = [], []
            for key in self.models.keys():
                if "discr" in key:
                    params += list(self.models[key].parameters())
                else:
                    params += list(self.models[key].parameters())
            self.opt_g = torch.optim.Adam(params, 1e-3)
            self.opt_d = torch.optim.Adam(params_d, 1e-3)

        def run_epoch(self, loader):
            for x in loader:
                out = self.models["decoder"](self.models["encoder"](x))
                fake_pred = self.models["discriminator"](out)
                loss_g = out.pow(2).mean() + fake_pred.mean()
                loss_d = fake_pred.pow(2).mean()
                loss_g.backward(retain_graph=True)
                self.opt_g.step()
                self.opt_d.zero_grad()
                loss_d.backward()
                self.opt_d.step()


    def main(opt, loader):
        trainer = Trainer(opt)
        for epoch in range(3):
            trainer.run_epoch(loader)
"""

_PACKAGE_MODEL = """
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)
"""


@pytest.mark.parametrize("layout", ["package-star", "script-star", "direct"])
def test_models_of_a_package_that_re_exports_them_with_a_star_import_are_seen(
        tmp_path: Path, layout: str) -> None:
    """monolayout: `monolayout/__init__.py` is `from .model import *`; the trainer builds
    `monolayout.Decoder(...)` into a dict whose keys depend on a setting. The models are seen through
    the star import and the dict keeps each path's entries, so the step between the two backwards
    is found (it was missed: every model was unknown)."""
    package = tmp_path / "nets"
    package.mkdir()
    (package / "model.py").write_text(textwrap.dedent(_PACKAGE_MODEL))
    if layout == "package-star":
        (package / "__init__.py").write_text("from .model import *\n")
        script_source = _MODELS_BY_TYPE.replace("from PACKAGE import Encoder, Decoder", "from nets import Encoder, Decoder")
    elif layout == "script-star":
        (package / "__init__.py").write_text("")
        script_source = _MODELS_BY_TYPE.replace("from PACKAGE import Encoder, Decoder", "from nets.model import *")
    else:
        (package / "__init__.py").write_text("")
        script_source = _MODELS_BY_TYPE.replace("from PACKAGE import", "from nets.model import")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(script_source))
    failing = script.read_text().splitlines().index("            loss_d.backward()") + 1
    assert _codes(script.read_text(), str(script)) == [(failing, "GG011")]



@pytest.mark.parametrize("pick", ["fn = self.fraction_net", "fn = None if self.target else self.fraction_net",
                                  "fn = self.fraction_net if not self.target else None"])
def test_a_module_called_through_a_local_name_is_the_module_it_was_read_from(pick: str) -> None:
    """fqf-iqn-qrdqn: `fn = None if self.target else self.fraction_net; fn(emb)`; the fraction net's
    optimizer steps between two backwards through its graph. The call through `fn` is a call of
    `self.fraction_net`, whose parameters that optimizer holds."""
    source = _program("""
        def update_params(optim, loss, retain_graph=False):
            optim.zero_grad()
            loss.backward(retain_graph=retain_graph)
            optim.step()


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.dqn_net = nn.Linear(4, 8)
                self.fraction_net = nn.Linear(8, 5)
                self.quantile_net = nn.Linear(8, 1)
                self.target = False

            def calculate_fractions(self, emb):
                PICK
                p = torch.softmax(fn(emb), dim=1)
                return p.cumsum(1), -(p * p.log()).sum(1)


        net = Net()
        fraction_optim = torch.optim.RMSprop(net.fraction_net.parameters(), lr=1e-3)
        quantile_optim = torch.optim.Adam(net.quantile_net.parameters(), lr=1e-3)
        for step in range(3):
            emb = torch.relu(net.dqn_net(torch.randn(16, 4)))
            taus, entropies = net.calculate_fractions(emb)
            fraction_loss = (taus.sum(1) * net.quantile_net(emb).squeeze(1).detach()).mean()
            entropy_loss = -0.01 * entropies.mean()
            update_params(fraction_optim, fraction_loss + entropy_loss, retain_graph=True)
            update_params(quantile_optim, net.quantile_net(emb).pow(2).mean() + entropy_loss)
    """).replace("PICK", pick)
    assert [code for _, code in _codes(source)] == ["GG011"]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("def time_to_learn(self):\n    return self.done\n", "agent.done"),
        ('def ready(self):\n    """Enough samples."""\n    return len(self.memory) > self.batch_size\n',
         "len(agent.memory) > agent.batch_size"),
        # A global, a call of something else, more than a return: not a test of the object alone.
        ("def due(self):\n    return self.t % UPDATE_EVERY == 0\n", None),
        ("def due(self):\n    return self.schedule(self.t)\n", None),
        ("def due(self):\n    self.t += 1\n    return self.t > 3\n", None),
    ],
)
def test_a_method_that_only_returns_a_test_of_its_object_is_that_test(method: str, expected: str | None) -> None:
    function = cst.parse_module(method).body[0]
    assert isinstance(function, cst.FunctionDef)
    found = _getter_test(function, cst.Name("agent"))
    assert (None if found is None else cst.Module([]).code_for_node(found)) == expected


@pytest.mark.parametrize(
    ("body", "role"),
    [
        ("opt.step()", Role.OPTIMIZER),
        ("opt.zero_grad()\nopt.step(closure)", Role.OPTIMIZER),
        ("opt.step(lambda: loss_fn())", Role.OPTIMIZER),
        # A gym environment handed in: its step takes an action and updates no weights.
        ("state, reward, done, _ = opt.step(action)", None),
    ],
)
def test_a_step_given_an_argument_is_an_optimizer_s_only_on_an_object_whose_gradients_are_reset(
        body: str, role: Role | None) -> None:
    roles = roles_in(cst.parse_module(body), {})
    assert roles.get("opt") is role


_TRANSFORM_BASE = """
    import copy


    class BaseTransform:
        def __call__(self, frame):
            return self.forward(copy.copy(frame))

        def forward(self, frame):
            return self._forward(frame)
"""

_TRANSFORM = """
    import torch
    from frames.transforms import BaseTransform


    class ScaleTransform(BaseTransform):
        def fit(self, frame):
            self.scale = frame.abs().max()

        def _forward(self, frame):
            return frame / self.scale
"""

_TRAIN_ON_TRANSFORMED = """
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader
    from frames.transforms import ScaleTransform

    frame = torch.randn(64, 4)
    transform = ScaleTransform()
    transform.fit(frame)
    frame = transform(frame)
    loader = DataLoader(frame, batch_size=8)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for batch in loader:
            loss = model(batch).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


@pytest.mark.parametrize("base", ["readable", "unreadable", "unreadable-derived"])
def test_an_object_of_a_project_class_that_is_no_module_makes_no_graph_when_called(
        tmp_path: Path, base: str) -> None:
    """pytorch-frame: `transform(tensor_frame)` of a transform class whose `__call__` is defined by a
    base class that its package re-exports (`from .base import BaseTransform` in `__init__.py`). The
    base is found and its `__call__` run; when it cannot be read, the call's graph is unsure (as an
    opaque callable's), so a loader over what it made, built before the loop, is no finding."""
    package = tmp_path / "frames" / "transforms"
    package.mkdir(parents=True)
    (tmp_path / "frames" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from .base import BaseTransform\nfrom .scale import ScaleTransform\n")
    (package / "base.py").write_text(textwrap.dedent(_TRANSFORM_BASE) if base == "readable" else "def broken(:\n")
    (package / "scale.py").write_text(textwrap.dedent(_TRANSFORM))
    script = tmp_path / "train.py"
    train = textwrap.dedent(_TRAIN_ON_TRANSFORMED)
    if base == "unreadable-derived":
        # What is computed from such a graph alone is as unsure (`.float()` of the transformed frame).
        train = train.replace("frame = transform(frame)", "frame = transform(frame).float() * 2")
    script.write_text(train)
    assert _codes(script.read_text(), str(script)) == []


_GAN_LOSS_BY_TYPE = """
import torch
import torch.nn as nn


def run(losstype, train=5):
    gen = nn.Linear(4, 4)
    disc = nn.Linear(4, 1)
    g_opt = torch.optim.Adam(gen.parameters())
    d_opt = torch.optim.Adam(disc.parameters())
    for epoch in range(train):
        for batch in [torch.randn(8, 4) for _ in range(2)]:
            g_opt.zero_grad()
            if losstype != "mse":
                d_opt.zero_grad()
            fake = gen(torch.randn(8, 4))
            if losstype == "mse":
                gen_loss = (fake - batch).pow(2).mean()
            else:
                d_fake = disc(fake.detach())
                d_real = disc(batch)
                d_gen = disc(fake)
                if losstype == "gan":
                    disc_loss = d_fake.mean() - d_real.mean()
                    gen_loss = -d_gen.mean()
                elif losstype == "fgan":
                    disc_loss = torch.exp(d_fake - 1).mean() - d_real.mean()
                    gen_loss = -torch.exp(d_gen - 1).mean()
                disc_loss.backward()
                d_opt.step()
            loss = gen_loss + 0.1 * fake.abs().mean()
            loss.backward()
            g_opt.step()

"""


def test_a_loss_bound_only_in_the_arms_of_an_elif_chain_is_this_iteration_s() -> None:
    """CausalDiscoveryToolbox SAM's shape: `disc_loss` is bound only under `losstype == "gan"` or
    `"fgan"` (no `else`), inside the `else` of `losstype == "mse"`. A path taking neither arm would fail
    with a NameError in the first iteration, so `disc_loss.backward()` never meets an earlier one's
    graph; what does fail is the generator loss after the discriminator's step (GG011, issue #66)."""
    source = _GAN_LOSS_BY_TYPE.strip() + "\n"
    found = [(row, code) for row, code in _codes(source)]
    failing = source.splitlines().index("            loss.backward()") + 1
    assert found == [(failing, "GG011")]


# -- what a list's items are ----------------------------------------------------------------------


def test_a_list_knows_what_every_item_put_in_it_is() -> None:
    from gradguard.analysis.values import add_item, item_of, join_items

    tensor, pair = Value(Kind.TENSOR), Value(Kind.TUPLE, elems=(Value(Kind.TENSOR), Value(Kind.TENSOR)))
    assert item_of(tensor) == "tensor" and item_of(pair) == "tuple"
    assert item_of(Value(Kind.TUPLE, elems=(Value(Kind.TENSOR), Value(Kind.SCALAR)))) is None
    assert add_item("", tensor) == "tensor" and add_item("tensor", tensor) == "tensor"
    assert add_item("tensor", pair) is None and add_item(None, tensor) is None
    empty, tensors = Value(Kind.LIST, items=""), Value(Kind.LIST, items="tensor")
    assert join_items(empty, tensors) == "tensor" and join_items(tensors, Value(Kind.NONE)) == "tensor"
    assert join_items(tensors, Value(Kind.LIST, items="tuple")) is None
    assert join_items(tensors, UNKNOWN) is None


_PER_LAYER = """
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = nn.ModuleList(nn.GRUCell(4, 4) for _ in range(3))

        def forward(self, x, hs):
            new = []
            for cell, h in zip(self.cells, hs):
                x = cell(x, h)
                new.append({item})
            return x, new

    net = Stack()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    hs = {start}
    for chunk in torch.randn(5, 6, 2, 4):
        loss = 0
        for x in chunk:
            y, hs = net(x, hs)
            loss = loss + y.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """


@pytest.mark.parametrize(
    ("start", "item", "items"),
    [
        ("[torch.zeros(2, 4)] * 3", "x", "tensor"),
        ("[torch.zeros(2, 4) for _ in range(3)]", "x", "tensor"),
        ("[(torch.zeros(2, 4), torch.zeros(2, 4))] * 3", "(x, x.tanh())", "tuple"),
        ("[torch.zeros(2, 4)] * 3", "(x, x.tanh())", None),  # tensors first, tuples later: not one shape
        ("[torch.zeros(2, 4)] * 3", "x if x.sum() > 0 else 0", None),
    ],
)
def test_a_carried_list_s_items_are_what_the_program_put_in_it(start: str, item: str, items: str | None) -> None:
    facts = facts_for(_program(_PER_LAYER.format(start=start, item=item)))
    [conflict] = facts.conflicts
    assert conflict.carrier is not None and conflict.carrier.holder.text == "hs"
    assert conflict.carrier.is_container and conflict.carrier.items == items


# -- who an optimizer updates, and what a module's call made ------------------------------------

_GAN_TRAINER = _program("""
    class Gen(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 8)
            self.head = nn.Linear(8, 8)

        def forward(self, z):
            h = torch.tanh(self.body(z))
            return self.head(h), h


    class Trainer:
        def __init__(self, gen, disc, opt_g, opt_d):
            self.gen, self.disc, self.opt_g, self.opt_d = gen, disc, opt_g, opt_d

        def step(self, real):
            fake, _ = self.gen(torch.randn(16, 4))
            d_loss = self.disc(real).mean() - self.disc(fake).mean()
            self.opt_d.zero_grad()
            d_loss.backward()
            self.opt_d.step()
            g_loss = self.disc(fake).mean()
            self.opt_g.zero_grad()
            g_loss.backward()
            self.opt_g.step()


    gen, disc = Gen(), nn.Linear(8, 1)
    opt_g = torch.optim.Adam(gen.parameters())
    opt_d = torch.optim.Adam(disc.parameters())
    trainer = Trainer(gen, disc, opt_g, opt_d)
    for _ in range(3):
        trainer.step(torch.randn(16, 8))
    """)


def test_an_optimizer_made_before_its_module_is_handed_on_names_it_where_it_steps() -> None:
    # `opt_d` was made over `disc`; it steps as `self.opt_d` where the module is `self.disc`.
    facts = facts_for(_GAN_TRAINER)
    assert facts is not None and len(facts.conflicts) == 1
    conflict = facts.conflicts[0]
    assert {"disc", "self.disc"} <= conflict.stepped
    # The part of the tuple `self.gen(...)` returned is the generator's output, not its `self.head`'s.
    assert conflict.carrier is not None and conflict.carrier.holder.text == "fake"
    assert {r.producer for r in conflict.carrier.first_reads} == {"self.gen"}
    assert conflict.cause.name == "GAN_REUSE"


@pytest.mark.parametrize("parameters", [
    "list(enc.parameters()) + list(dec.parameters())",
    "[*enc.parameters(), *dec.parameters()]",
    "(p for p in [*enc.parameters(), *dec.parameters()])",
])
def test_an_optimizer_of_several_modules_parameters_updates_each(parameters: str) -> None:
    facts = facts_for(_program(f"""
        enc, dec = nn.Linear(4, 2), nn.Linear(2, 4)
        critic = nn.Linear(2, 1)
        opt_ae = torch.optim.Adam({parameters})
        opt_c = torch.optim.Adam(critic.parameters())
        for _ in range(3):
            x = torch.randn(8, 4)
            z = enc(x)
            ae_loss = (dec(z) - x).pow(2).mean()
            opt_ae.zero_grad()
            ae_loss.backward()
            opt_ae.step()
            c_loss = critic(z).mean()
            opt_c.zero_grad()
            c_loss.backward()
            opt_c.step()
        """))
    assert facts is not None and len(facts.conflicts) == 1
    conflict = facts.conflicts[0]
    assert {"enc", "dec"} <= conflict.stepped
    assert conflict.carrier is not None and conflict.carrier.settled
    assert conflict.cause.name == "SHARED_FORWARD"


def test_a_write_into_a_tensor_s_items_goes_on_with_its_history() -> None:
    # `ema[idx] = ...` is an in-place write: `ema` stays a tensor, now holding the graph written into
    # it, and the loop carries it (a tensor, not a list of what was stored).
    facts = facts_for(_program("""
        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        ema = torch.zeros(32)
        for _ in range(4):
            idx = torch.randint(0, 32, (8,))
            per = (net(torch.randn(8, 4)).squeeze(-1) - 1).pow(2)
            loss = (per * (1 + ema[idx])).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            ema[idx] = 0.9 * ema[idx] + 0.1 * per
        """))
    assert facts is not None and len(facts.conflicts) == 1
    carrier = facts.conflicts[0].carrier
    assert carrier is not None and carrier.holder.text == "ema"
    assert not carrier.is_container and carrier.self_update


# -- tensors and parameters written in place -----------------------------------------------------------


def _messages(source: str, path: str | None = None) -> list[str]:
    return [f"{d.code} {d.message}" for d in analyze(source, path=path)]


def _row(source: str, text: str) -> int:
    """The first row of `source` holding `text`."""
    return next(row for row, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.mark.parametrize(("write", "found"), [
    ("bank.index_copy_(0, idx, feats)", True),
    ("bank.mul_(0.5).add_(feats.mean())", True),
    ("bank.index_copy_(0, idx, feats.detach())", False),
    ("bank.data.index_copy_(0, idx, feats)", False),
])
def test_an_in_place_write_gives_a_tensor_without_graph_the_graph_it_writes(write: str, found: bool) -> None:
    """A bank made without grad and written in place from a model's output requires grad from then on,
    with that graph (and its old history under it): the next step's loss reads it."""
    source = _program(f"""
        net = nn.Linear(4, 8)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        bank = torch.zeros(32, 8)
        for _ in range(4):
            idx = torch.randint(0, 32, (8,))
            feats = net(torch.randn(8, 4))
            loss = F.cross_entropy(feats @ bank.t(), idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            {write}
        """)
    messages = _messages(source)
    row = _row(source, "loss.backward()")
    expected = f"GG003 `bank` carries the previous iteration's graph, which the backward at line {row} freed"
    assert messages == ([expected] if found else []), messages


EMA = """
    import copy

    student = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    teacher = copy.deepcopy(student)
    teacher.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)


    def blend(average, model, decay=0.9):
        for averaged, param in zip(average.parameters(), model.parameters()):
            {update}


    for _ in range(4):
        x = torch.randn(8, 4)
        loss = (student(x) - {target}).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        blend(teacher, student)
    """


@pytest.mark.parametrize(("update", "target", "found"), [
    ("averaged.mul_(decay).add_((1 - decay) * param)", "teacher(x)", True),
    ("averaged.mul_(decay).add_(param, alpha=1 - decay)", "teacher(x)", True),
    ("averaged.copy_(decay * averaged + (1 - decay) * param)", "teacher(x)", True),
    # The update reads the student's weights detached, or the teacher's output is detached.
    ("averaged.copy_(decay * averaged + (1 - decay) * param.detach())", "teacher(x)", False),
    ("averaged.mul_(decay).add_((1 - decay) * param)", "teacher(x).detach()", False),
    # The copy is a module of its own: what is written into its parameters is not the student's.
    ("averaged.mul_(decay).add_((1 - decay) * param)", "x.sum(1, keepdim=True)", False),
    ("with torch.no_grad(): averaged.mul_(decay).add_((1 - decay) * param)", "teacher(x)", False),
])
def test_parameters_written_in_place_from_a_graph_reach_the_module_s_later_calls(update: str, target: str,
                                                                                   found: bool) -> None:
    """A frozen copy's parameters blended in place from the student's outside `no_grad`: each later
    call of the copy reads what the blend wrote, whatever the function doing it calls the module."""
    source = _program(EMA.format(update=update, target=target))
    messages = _messages(source)
    expected = ("GG003 `teacher.parameters()` carries the previous iteration's graph, which the backward at line "
                f"{_row(source, 'loss.backward()')} freed")
    assert messages == ([expected] if found else []), messages


@pytest.mark.parametrize(("use", "write", "found"), [
    ("y = x * buf", "buf.add_(1.0)", True),
    ("y = x * buf[:, :3].t().t()", "buf.add_(1.0)", True),  # a view shares the version of its base
    ("y = x * buf.detach()", "buf.add_(1.0)", True),  # so does a detached alias
    ("y = x * buf", "buf.detach().add_(1.0)", True),
    ("y = x * buf", "buf.data.add_(1.0)", False),  # `.data` does not
    ("y = x * buf", "buf[0] = 2.0", True),
    ("y = x * buf", "buf *= 0.9", True),  # an augmented assignment to a tensor writes it in place
    ("y = x * buf", "buf = buf * 0.9", False),  # ... a plain one binds another tensor
    ("y = x + buf", "buf.add_(1.0)", False),  # an addition keeps nothing for its backward
    ("y = x * buf.clone()", "buf.add_(1.0)", False),
    ("y = x * buf", "other.add_(1.0)", False),
])
def test_a_tensor_written_in_place_under_a_node_that_kept_it_fails_its_backward(use: str, write: str,
                                                                               found: bool) -> None:
    """Version counting: a node keeps the operands its backward needs (here `buf`, for the gradient of
    `x`); written in place before that backward, the backward fails, whether or not under no_grad."""
    source = _program(f"""
        net = nn.Linear(3, 3)
        buf = torch.ones(8, 3)
        other = torch.ones(8, 3)
        for _ in range(2):
            x = net(torch.randn(8, 3))
            {use}
            with torch.no_grad():
                {write}
            y.sum().backward()
        """)
    codes = _codes(source)
    assert codes == ([(_row(source, "backward()"), "GG011")] if found else []), codes


def test_a_module_s_parameters_written_in_place_change_under_the_graph_of_its_calls() -> None:
    """A target network blended in place between the TD target that went through it and the
    backward: the target's layers kept their weights, and the finding names the target."""
    source = _program("""
        import copy

        q = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        target_q = copy.deepcopy(q)
        opt = torch.optim.Adam(q.parameters())
        for _ in range(3):
            s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
            td_target = r + 0.99 * target_q(s2).max(1).values
            loss = F.mse_loss(q(s).max(1).values, td_target)
            with torch.no_grad():
                for t, p in zip(target_q.parameters(), q.parameters()):
                    t.mul_(0.95).add_(0.05 * p)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    facts = facts_for(source)
    assert facts is not None and [c.cause.name for c in facts.conflicts] == ["STEPPED"]
    conflict = facts.conflicts[0]
    assert conflict.carrier is not None and conflict.carrier.holder.text == "td_target"
    assert facts.code(conflict.freed_by.node) == "t.mul_(0.95)"


@pytest.mark.parametrize(("max_norm", "found"), [("max_norm=1.0", True), ("max_norm=None", False), ("", False)])
def test_an_embedding_with_max_norm_writes_its_weight_in_place_under_a_tied_layer(max_norm: str,
                                                                                  found: bool) -> None:
    """The facts: an Embedding built with `max_norm` renormalises the rows it looks up of `weight` in
    place, in its forward; a layer tied to that weight (or a product read from it) kept it first."""
    source = _program(f"""
        class Decoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4, {max_norm})
                self.out = nn.Linear(4, 10, bias=False)
                self.out.weight = self.embed.weight

            def forward(self, tokens):
                logits = []
                for t in range(tokens.shape[1]):
                    logits.append(self.out(torch.tanh(self.embed(tokens[:, t]))))
                return torch.stack(logits, 1)


        model = Decoder()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        tokens = torch.randint(0, 10, (2, 5))
        loss = F.cross_entropy(model(tokens).flatten(0, 1), tokens.flatten())
        loss.backward()
        opt.step()
        """)
    assert _codes(source) == ([(_row(source, "loss.backward()"), "GG011")] if found else [])


def test_a_write_met_first_is_the_error_the_program_stops_at() -> None:
    """A buffer scaled by, then updated in place from activations with grad: the first backward fails
    on the write (in-place), so the freed graph later iterations would reach is no second finding."""
    source = _program("""
        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", torch.ones(1))

            def forward(self, x):
                out = x / self.scale
                self.scale.mul_(0.9).add_(0.1 * x.abs().mean())
                return out


        net, scale = nn.Linear(4, 4), Scale()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            loss = scale(net(torch.randn(8, 4))).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    expected = ("GG011 `loss` goes through `self.scale`'s graph, but the in-place write at line "
                f"{_row(source, 'self.scale.mul_')} has since changed `self.scale`, which that graph saved")
    assert _messages(source) == [expected]


def test_writes_into_a_tensor_its_own_writes_kept_nothing_of_and_a_rebound_name_are_no_change() -> None:
    """From spiking-network code (norse, snntorch) that is correct: a buffer of per-step outputs filled
    item by item (`voltages[t] = v`: each write's node keeps no earlier value of `voltages`), and a mask
    made anew at each call before it is written (`mask = zeros_like(x); mask[i, j] = 1`): the tensor an
    earlier call's product kept is another one."""
    source = _program("""
        class Readout(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def winner(self, v):
                mask = torch.zeros_like(v)
                mask[torch.arange(v.shape[0]), v.argmax(1)] = 1
                return v * mask

            def forward(self, x):
                voltages = torch.zeros(x.shape[0], x.shape[1], 3)
                for t in range(x.shape[0]):
                    voltages[t, :, :] = self.winner(self.fc(x[t]))
                return voltages.max(0).values


        model = Readout()
        opt = torch.optim.Adam(model.parameters())
        for _ in range(3):
            loss = F.cross_entropy(model(torch.randn(5, 8, 4)), torch.randint(0, 3, (8,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    assert _codes(source) == []


TWO_VIEWS = """
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.ones(1))

        def forward(self, x):
            if self.training:
                self.scale.mul_(0.9).add_(0.1 * x.detach().abs().mean())
            return x / self.scale


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.scale = nn.Linear(4, 4), Scale()

        def forward(self, x):
            return self.scale(self.fc(x))


    def train(net, loader, opt):
        for x in loader:
            {mode}
            loss = (net(x) * net(x + 1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


    net = {build}
    train(net, [torch.randn(8, 4) for _ in range(3)], torch.optim.SGD(net.parameters(), lr=0.1))
    """


@pytest.mark.parametrize(("mode", "build", "found"), [
    ("pass", "Net()", True),  # a module is in training mode from construction
    ("net.train()", "Net()", True),
    ("net.eval()", "Net()", False),  # `eval()` reaches the layers below it
    ("net.train(False)", "Net()", False),
    ("pass", "Net().eval()", False),
])
def test_a_module_s_training_mode_decides_what_its_code_runs(mode: str, build: str, found: bool) -> None:
    """`if self.training:` in a module's forward runs as the module's mode says: a buffer updated in
    place in training mode, called for two views before one backward, changes under the first view's
    graph; in eval mode it is not updated."""
    source = _program(TWO_VIEWS.format(mode=mode, build=build))
    assert _codes(source) == ([(_row(source, "loss.backward()"), "GG011")] if found else [])


@pytest.mark.parametrize("head", ["self.head(h)", "h @ self.embed.weight.T", "F.linear(h, self.embed.weight)"])
@pytest.mark.parametrize("tie", ["self.head.weight = self.embed.weight", "self.embed.weight = self.head.weight"])
def test_a_weight_tied_either_way_or_read_through_a_view_is_one_tensor(head: str, tie: str) -> None:
    """Two calls of a model in one expression (`model(a) + model(b)`): the second call's embedding
    renormalises the weight the first call's head kept (the first result is alive, though no name
    holds it yet), whichever way the weights were tied and however the head reads the weight."""
    source = _program(f"""
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(4, 10, bias=False)
                self.embed = nn.Embedding(10, 4, max_norm=1.0)
                {tie}

            def forward(self, idx):
                h = torch.tanh(self.embed(idx))
                return {head}


        model = LM()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        a, b = torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5))
        loss = F.cross_entropy(model(a).flatten(0, 1), b.flatten()) + F.cross_entropy(model(b).flatten(0, 1), a.flatten())
        loss.backward()
        opt.step()
        """)
    assert _codes(source) == [(_row(source, "loss.backward()"), "GG011")]


def test_a_registered_buffer_is_a_tensor_its_item_writes_grow() -> None:
    """`register_buffer("memory", F.normalize(...))` holds a tensor (whatever the model knows of what
    made it): items written into it from a graph are its history, and the finding names it."""
    source = _program("""
        class Bank(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("memory", F.normalize(torch.randn(32, 4), dim=1))

            def forward(self, feats):
                return feats @ self.memory.t()


        net, bank = nn.Linear(6, 4), Bank()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            idx = torch.randint(0, 32, (8,))
            feats = net(torch.randn(8, 6))
            loss = F.cross_entropy(bank(feats), idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            bank.memory[idx] = 0.5 * bank.memory[idx] + 0.5 * feats
        """)
    facts = facts_for(source)
    assert facts is not None and [c.cause.name for c in facts.conflicts] == ["LOOP_CARRIED"]
    carrier = facts.conflicts[0].carrier
    assert carrier is not None and carrier.holder.text == "self.memory" and carrier.self_update


def test_the_items_of_a_tuple_display_are_alive_while_the_next_ones_run() -> None:
    """`z1, z2 = self.encoder(x1), self.encoder(x2)`: the first view's graph (which kept the buffer)
    is alive, and one call older, when the second view's forward writes the buffer in place."""
    source = _program(TWO_VIEWS.format(mode="pass", build="Net()").replace(
        "loss = (net(x) * net(x + 1)).mean()", "a, b = net(x), net(x + 1)\n            loss = (a * b).mean()"))
    assert _codes(source) == [(_row(source, "loss.backward()"), "GG011")]


def test_a_tensor_made_without_grad_from_numbers_is_a_tensor() -> None:
    """`F.normalize(torch.randn(n, d), dim=1)` on an object whose class has no module base: a tensor
    (items written into it are an in-place write, not a list growing), so the finding offers no
    emptying of it."""
    source = _program("""
        class Memory:
            def __init__(self):
                self.features = F.normalize(torch.randn(32, 4), dim=1)

            def update(self, idx, feats):
                self.features[idx] = feats


        net, memory = nn.Linear(6, 4), Memory()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            idx = torch.randint(0, 32, (8,))
            feats = net(torch.randn(8, 6))
            loss = F.cross_entropy(feats @ memory.features.t(), idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            memory.update(idx, feats)
        """)
    facts = facts_for(source)
    assert facts is not None and len(facts.conflicts) == 1
    carrier = facts.conflicts[0].carrier
    assert carrier is not None and carrier.holder.text == "memory.features" and not carrier.is_container


def test_a_comprehension_s_item_runs_as_a_loop_s_next_iteration() -> None:
    """`[net(v) for v in views]`: the second item's call meets what the first one left (here a buffer
    written in place under the first item's graph), as the next iteration of a loop would."""
    source = _program(TWO_VIEWS.format(mode="pass", build="Net()").replace(
        "loss = (net(x) * net(x + 1)).mean()", "a, b = [net(v) for v in (x, x + 1)]\n            loss = (a * b).mean()"))
    assert _codes(source) == [(_row(source, "loss.backward()"), "GG011")]
