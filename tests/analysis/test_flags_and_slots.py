"""Flags assigned from tests, tests decided by the values they test, and list slots written at a loop's
counter (from GMvandeVen/continual-learning's replay, reductions r46 and r47).

- `separate = True if (model.per_context and replay_x is not None) else False` is that test wherever
  `if separate:` is read, until `separate` or what the test reads is assigned again
  (`Interpreter.assume_flag`, `conditions.flag_test`); a conditional expression is decided by the
  path's conditions like an `if` (`decided_test`).
- `a and b` assumed false on a path that takes `a` true makes `b` false (`resolve_compound`); a test
  decides its complement (`x > 0` and `x <= 0`); `type(x) == list` / `isinstance(x, (list, tuple))`
  of a tensor, a module or None is false (`type_test`).
- In `for i in range(n)`, a list the body uses only as `xs[i]` holds, at `i`, what it held before the
  loop until this iteration writes it (`scopes.slots_of_counter`, `Interpreter.counted_slots`).

Each program runs under torch as the test says (the buggy ones raise the error).
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from fixture_support import run_programs

from gradguard.analysis import analyze, analyze_file
from gradguard.analysis.conditions import complement_key, flag_test, key_of
from gradguard.analysis.scopes import slots_of_counter
from gradguard.analysis.values import FRESH, NONE, Kind, Value, join

REPLAY = '''"""Replay in continual learning: with a head per context, each earlier context's replayed loss is
backward-ed on its own, from a forward of its own; otherwise they are summed into the total."""
import argparse

import torch
from torch import nn
from torch.nn import functional as F


class Learner(nn.Module):
    def __init__(self, contexts=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(32, 4) for _ in range(contexts + 1)])
        self.per_context = False

    def forward(self, x, context):
        return self.heads[context](self.body(x))


def train_batch(model, optimizer, x, y, replay_x=None, replay_y=None, weight=0.5):
    optimizer.zero_grad()
    separate = True if (model.per_context and replay_x is not None) else False
    if replay_x is not None:
        n = len(replay_y)
        replay_losses = [None] * n
        for context in range(n):
            if replay_y[context] is not None:
                replay_losses[context] = F.cross_entropy(model(replay_x, context), replay_y[context])
            if separate and replay_losses[context] is not None:
                (weight * replay_losses[context] / n).backward()
        known = [loss for loss in replay_losses if loss is not None]
        replay_loss = sum(known) / max(len(known), 1)
    current = F.cross_entropy(model(x, len(replay_y) if replay_y is not None else 0), y)
    if replay_x is None:
        total = current
    elif separate:
        total = (1 - weight) * current
    else:
        total = (1 - weight) * current + weight * replay_loss
    total.backward()
    optimizer.step()
    return total.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-context", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Learner()
    model.per_context = args.per_context
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(4):
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        if step == 0:
            loss = train_batch(model, optimizer, x, y)
        else:
            replay_x = torch.randn(8, 16)
            replay_y = [torch.randint(0, 4, (8,)) for _ in range(3)]
            loss = train_batch(model, optimizer, x, y, replay_x, replay_y)
        print(f"step {step}: {loss:.3f}")
    print("ok")


if __name__ == "__main__":
    main()
'''

# The per-context arm sums the replayed losses again, after each was backward-ed on its own.
REPLAY_SUMMED_TWICE = REPLAY.replace("        total = (1 - weight) * current\n",
                                     "        total = (1 - weight) * current + weight * replay_loss\n")
# The same program with the flag written as a plain test, and with the flag negated.
REPLAY_PLAIN_FLAG = REPLAY.replace("True if (model.per_context and replay_x is not None) else False",
                                   "model.per_context and replay_x is not None")
REPLAY_NEGATED_FLAG = REPLAY.replace(
    "separate = True if (model.per_context and replay_x is not None) else False",
    "summed = False if (model.per_context and replay_x is not None) else True",
).replace("if separate and", "if not summed and").replace("elif separate:", "elif not summed:")
# Each context's loss read back at the first slot: from the second context on, a graph its own
# backward freed.
REPLAY_FIRST_SLOT = REPLAY.replace("(weight * replay_losses[context] / n).backward()",
                                   "(weight * replay_losses[0] / n).backward()")

WARMUP = '''import torch
from torch import nn


def train(model, optimizer, batches, warmup):
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        early = warmup > 0
        DECREMENT
        if early:
            loss.backward()
        if warmup <= 0:
            loss.backward()
        optimizer.step()
    print("ok")


model = nn.Linear(4, 1)
train(model, torch.optim.SGD(model.parameters(), lr=0.1), [torch.randn(3, 4) for _ in range(4)], 1)
'''
# `warmup` counted down between the flag and the second test: the flag no longer says what the
# test does (warmup 1: both backwards run in the first iteration).
WARMUP_COUNTED = WARMUP.replace("DECREMENT", "warmup -= 1")
WARMUP_FIXED = WARMUP.replace("DECREMENT", "pass")

TYPE_TESTED = '''import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x, hidden):
        output, hidden = self.rnn(x, hidden)
        return self.out(output), hidden


def detach_state(hidden):
    if isinstance(hidden, (list, tuple)):
        return hidden
    return hidden.detach()


model = Tagger()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = torch.zeros(1, 2, 8)
for step in range(4):
    x = torch.randn(5, 2, 4)
    hidden = detach_state(hidden)
    scores, hidden = model(x, hidden)
    loss = scores.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("ok")
'''


def _errors(source: str) -> list[tuple[str, str]]:
    lines = source.splitlines()
    return sorted((d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source) if d.severity.name == "ERROR")


def test_a_flag_assigned_from_a_test_is_that_test() -> None:
    assert _errors(REPLAY) == []
    assert _errors(REPLAY_PLAIN_FLAG) == []
    assert _errors(REPLAY_NEGATED_FLAG) == []
    assert _errors(REPLAY_SUMMED_TWICE) == [("GG002", "total.backward()")]


def test_a_slot_read_at_another_index_still_holds_the_earlier_graphs() -> None:
    assert "(weight * replay_losses[0] / n).backward()" in [line for _, line in _errors(REPLAY_FIRST_SLOT)]


def test_a_flag_is_its_test_only_until_the_test_reads_something_else() -> None:
    assert _errors(WARMUP_FIXED) == []
    assert _errors(WARMUP_COUNTED) == [("GG001", "loss.backward()")]


def test_a_flag_whose_test_reads_the_flag_is_no_flag() -> None:
    """`done = done or t >= 5` reads the flag's old value: tying the flag to that test would make
    the test stand for itself (the analysis of spinningup's and moco's loops ran out of depth)."""
    source = """import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for episode in range(3):
    done, t, loss = False, 0, None
    while not done:
        loss = model(torch.randn(2, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        t += 1
        done = done or t >= 5
        if done:
            loss.backward()
"""
    lines = source.splitlines()
    result = analyze_file(source)
    assert result.incomplete == ()
    assert [(d.code, lines[d.span.start.row - 1].strip()) for d in result.diagnostics] == [
        ("GG001", "loss.backward()")]


def test_compounds_sharing_a_part_resolve_once() -> None:
    """moco's `main_worker`: `a and b` assumed, then `not a or (a and c)` true. Assuming `a and c`
    meets the compounds holding `a`, the second one included, whose resolution assumed `a and c`
    again: the analysis ran out of depth ('nesting too deep'). Each compound is resolved once at a
    time."""
    source = """import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--multiprocessing-distributed", action="store_true")
parser.add_argument("--gpu", type=int, default=None)
parser.add_argument("--rank", type=int, default=0)
parser.add_argument("--world-size", type=int, default=1)
args = parser.parse_args()


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    if args.multiprocessing_distributed and args.gpu != 0:
        def print_pass(*args):
            pass
    if args.gpu is not None:
        print("Use GPU: {} for training".format(args.gpu))
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        if args.distributed:
            print(epoch)
        loss = model(torch.randn(3, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not args.multiprocessing_distributed or (
            args.multiprocessing_distributed and args.rank % ngpus_per_node == 0
        ):
            print("save")


def main():
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
    else:
        main_worker(args.gpu, ngpus_per_node, args)


if __name__ == "__main__":
    main()
"""
    result = analyze_file(source)
    assert result.incomplete == ()
    assert result.diagnostics == ()


def test_a_type_test_of_a_tensor_is_false() -> None:
    assert _errors(TYPE_TESTED) == []
    kept = TYPE_TESTED.replace("        return hidden\n    return hidden.detach()",
                               "        return hidden.detach()\n    return hidden")
    assert _errors(kept) == [("GG003", "loss.backward()")]


def test_flag_tests() -> None:
    def read(text: str) -> tuple[str | None, bool] | None:
        found = flag_test(cst.parse_expression(text))
        return None if found is None else (key_of(found[0]), found[1])

    assert read("True if (a and b is not None) else False") == ("(a and (b is not None))", True)
    assert read("False if x > 0 else True") == ("(x > 0)", False)
    assert read("not (step % k == 0)") == ("((step % k) == 0)", False)
    assert read("a or b") == ("(a or b)", True)
    assert [read(t) for t in ("flag", "x if c else y", "f(x) > 0", "1 if c else 0")] == [None, None, None, None]


def test_complements() -> None:
    def complement(text: str) -> str | None:
        return complement_key(cst.parse_expression(text))

    assert [complement(t) for t in ("x > 0", "x <= 0", "a is None", "k in ks", "a == 'l2'")] == [
        "(x <= 0)", "(x > 0)", "(a is not None)", "(k not in ks)", "(a != 'l2')"]
    assert [complement(t) for t in ("0 < x < 1", "f(x) > 0", "a and b")] == [None, None, None]


def test_slots_of_a_counter() -> None:
    loop = cst.parse_statement(
        "for i in range(n):\n"
        "    if ok[i]:\n"
        "        losses[i] = f(x)\n"
        "    kept[i] = losses[i]\n"
        "    seen[i] = 1\n"
        "    seen.append(2)\n"
        "    other[j] = 3\n"
        "    total = sum(kept)\n")
    assert isinstance(loop, cst.For)
    assert slots_of_counter(loop.body, "i") == {"losses", "ok"}
    rebinding = cst.parse_statement("for i in range(n):\n    xs[i] = 1\n    i = 2\n")
    assert isinstance(rebinding, cst.For)
    assert slots_of_counter(rebinding.body, "i") == frozenset()


def test_paths_that_stored_at_one_index_binding_keep_it_joined() -> None:
    binding = frozenset({object()})
    loss = Value(Kind.TENSOR, frozenset({7}), frozenset({7}), True)
    stored = Value(Kind.LIST, indexed=(("i", binding, loss),))
    before = Value(Kind.LIST, indexed=(("i", binding, NONE),))
    joined = join(stored, before)
    assert [(name, defs is binding, item.nodes, item.maybe_none) for name, defs, item in joined.indexed] == [
        ("i", True, frozenset({7}), True)]
    # Another binding of `i` (another iteration): nothing is known at it.
    assert join(stored, Value(Kind.LIST, indexed=(("i", frozenset({object()}), FRESH),))).indexed == ()


_RUNS = [
    ("replay", REPLAY, [], False), ("replay-per-context", REPLAY, ["--per-context"], False),
    ("plain-flag", REPLAY_PLAIN_FLAG, ["--per-context"], False),
    ("negated-flag", REPLAY_NEGATED_FLAG, ["--per-context"], False),
    ("summed-twice", REPLAY_SUMMED_TWICE, ["--per-context"], True),
    ("first-slot", REPLAY_FIRST_SLOT, ["--per-context"], True),
    ("warmup", WARMUP_FIXED, [], False), ("warmup-counted", WARMUP_COUNTED, [], True),
    ("type-tested", TYPE_TESTED, [], False)]

def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    scripts: dict[Path, list[str]] = {}
    for name, source, args, _ in _RUNS:
        (tmp_path / name).mkdir()
        script = tmp_path / name / "train.py"
        script.write_text(source, encoding="utf-8")
        scripts[script] = args
    ended = run_programs(scripts)
    for (name, _, _, fails), script in zip(_RUNS, scripts):
        outcome = ended[script]
        if fails:
            assert "backward through the graph a second time" in (outcome.error_message or ""), name
        else:
            assert outcome.ok and outcome.stdout.strip().endswith("ok"), (name, outcome.traceback)
