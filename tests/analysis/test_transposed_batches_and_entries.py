"""Batches made by transposing stored items (`states, actions, ... = zip(*batch)`) from a deque, and
a module's once-call of its `main(args)` left to main's own analysis as an entry point."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradguard.analysis import analyze
from gradguard.analysis.program import Program

REPLAY = textwrap.dedent('''\
\"\"\"DQN on a chain with a feature encoder whose features go to the replay buffer (one file).\"\"\"
import copy
import random
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F


class ReplayBuffer:
    def __init__(self, capacity):
        self.buffer = deque(maxlen=capacity)

    def push(self, state, action, reward, next_state, done):
        self.buffer.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        batch = random.sample(self.buffer, batch_size)
        states, actions, rewards, next_states, dones = zip(*batch)
        return (torch.stack(states), torch.tensor(actions), torch.tensor(rewards),
                torch.stack(next_states), torch.tensor(dones, dtype=torch.float32))

    def __len__(self):
        return len(self.buffer)


def one_hot(index, n=6):
    o = torch.zeros(n)
    o[index] = 1.0
    return o


encoder = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
q_head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
target_encoder, target_head = copy.deepcopy(encoder), copy.deepcopy(q_head)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(q_head.parameters()), lr=1e-3)
buffer = ReplayBuffer(500)

position = 0
for step in range(60):
    z = encoder(one_hot(position))
    action = int(q_head(z).argmax()) if random.random() > 0.3 else random.randrange(2)
    position = min(5, position + 1) if action == 1 else max(0, position - 1)
    done = position == 5
    with torch.no_grad():
        z_next = target_encoder(one_hot(position))
    buffer.push(z, action, 1.0 if done else -0.01, z_next, done)
    if done:
        position = 0
    if len(buffer) >= 16:
        zb, ab, rb, z2b, db = buffer.sample(16)
        q_sa = q_head(zb).gather(1, ab.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = rb + 0.9 * (1 - db) * target_head(z2b).max(1).values
        loss = F.smooth_l1_loss(q_sa, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
''')


def _codes(source: str) -> list[tuple[str, int]]:
    return sorted((d.code, d.span.start.row) for d in analyze(source))


def test_features_pushed_with_their_graph_come_back_through_zip_star() -> None:
    """The encoder output `z` is pushed into a deque; `zip(*batch)` hands each position's items back
    as one tuple, stacked into the batch whose backward meets the graph an earlier update freed."""
    assert _codes(REPLAY) == [("GG003", 58)]


def test_features_pushed_detached_are_clean() -> None:
    assert _codes(REPLAY.replace("buffer.push(z, action", "buffer.push(z.detach(), action")) == []


def test_positions_of_known_items_are_transposed_one_by_one() -> None:
    """`zip(*pairs)` over a list of (graph, data) pairs: only the first column carries the graph."""
    source = textwrap.dedent("""\
        import torch

        w = torch.ones(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        pairs = [(w * 2, torch.zeros(3)), (w * 3, torch.ones(3))]
        preds, targets = zip(*pairs)
        for step in range(3):
            loss = ((torch.stack(targets) - 1) ** 2).sum() + (w ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        for step in range(3):
            loss = (torch.stack(preds) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    assert _codes(source) == [("GG006", 15)]


MAIN = textwrap.dedent("""\
    import argparse

    import torch
    import torch.nn as nn


    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--steps", type=int, default=5)
        return parser.parse_args()


    def main(args):
        rnn = nn.GRU(4, 8)
        opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
        hidden = torch.zeros(1, 2, 8)
        for step in range(args.steps):
            out, hidden = rnn(torch.randn(3, 2, 4), hidden)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


    if __name__ == "__main__":
        main(parse_args())
    """)


def _runs_of_main(source: str) -> list[bool]:
    """Whether each analysis of `main`'s body was as an entry (True) or inlined at the module's call
    (False)."""
    program = Program(cst.parse_module(source), frozenset({"torch"}))
    runs: list[bool] = []
    entry, inline = Program._entry, Program.inline_call

    def spy_entry(self, info, *rest, **named):  # type: ignore[no-untyped-def]
        if info.qualname == "main":
            runs.append(True)
        return entry(self, info, *rest, **named)

    def spy_inline(self, info, args, kwargs, state, frame, self_value, call):  # type: ignore[no-untyped-def]
        if info.qualname == "main" and isinstance(call, cst.Call):
            runs.append(False)
        return inline(self, info, args, kwargs, state, frame, self_value, call)

    program._entry = spy_entry.__get__(program)  # type: ignore[method-assign]
    program.inline_call = spy_inline.__get__(program)  # type: ignore[method-assign]
    program.run()
    return runs


def test_main_called_once_by_the_module_is_analysed_once_as_its_entry() -> None:
    assert _runs_of_main(MAIN) == [True]
    assert _codes(MAIN) == [("GG003", 21)]


def test_main_given_a_graph_or_a_literal_is_still_followed_from_its_call() -> None:
    with_model = MAIN.replace("def main(args):", "def main(args, rnn):").replace(
        "        rnn = nn.GRU(4, 8)\n", "").replace("main(parse_args())", "main(parse_args(), nn.GRU(4, 8))")
    assert _runs_of_main(with_model) == [False, True]
    literal = MAIN.replace("def main(args):", "def main(args, verbose):").replace(
        "main(parse_args())", "main(parse_args(), True)")
    assert _runs_of_main(literal) == [False, True]


def test_a_replay_buffer_the_loop_samples_from_is_a_store_not_a_collection_to_empty() -> None:
    """The model says the buffer is sampled (`random.sample(self.buffer, n)`); the cause model then
    advises storing detached items where they are added, never emptying the buffer."""
    from gradguard import causes
    from gradguard.analysis import facts_for

    facts = facts_for(REPLAY)
    assert facts is not None
    (conflict,) = facts.conflicts
    assert conflict.carrier is not None and conflict.carrier.is_container and conflict.carrier.sampled
    assert causes.fix_kind(causes.Cause.COLLECTED, causes.Evidence(sampled=True)) is causes.FixKind.DETACH
    (finding,) = analyze(REPLAY)
    assert finding.fix is None
    assert "Store the tensors added to `self.buffer` at line 16 detached" in finding.message
    assert "Empty" not in finding.message


def test_a_list_of_losses_summed_whole_is_still_emptied() -> None:
    source = textwrap.dedent("""\
        import torch

        w = torch.ones(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        losses = []
        for step in range(4):
            losses.append((w * step).sum())
            opt.zero_grad()
            torch.stack(losses).sum().backward()
            opt.step()
        """)
    from gradguard.analysis import facts_for

    facts = facts_for(source)
    assert facts is not None
    assert [c.carrier.sampled for c in facts.conflicts if c.carrier is not None] == [False]


def test_an_action_sampled_with_multinomial_carries_no_graph_into_the_buffer() -> None:
    """`probs.multinomial(1)` returns integer indices, never a graph (a generated torch fact): a buffer
    of detached features and sampled actions is clean (RL-Adventure-2's ACER, a false GG006 before)."""
    source = REPLAY.replace(
        "    action = int(q_head(z).argmax()) if random.random() > 0.3 else random.randrange(2)\n",
        "    sampled = q_head(z).softmax(-1).multinomial(1)\n    action = int(sampled)\n",
    ).replace("buffer.push(z, action,", "buffer.push(z.detach(), sampled,")
    assert "multinomial" in source and "sampled," in source
    assert _codes(source) == []
