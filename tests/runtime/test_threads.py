"""Per-thread attribution (issue 12, item 10): with two training threads per round, and threads of earlier
rounds gone (their ids reused by the new ones, whose autograd sequence numbers start again from zero),
each thread's error names its own earlier backward and the rule, every round."""

from __future__ import annotations

import inspect
import threading

import torch

import gradguard
from gradguard.runtime import monitor as gg_monitor

ROUNDS = 10


def _train(model: torch.nn.Module, warmup: int, barrier: threading.Barrier, out: dict[str, object]) -> None:
    x = torch.randn(4, 8)
    barrier.wait()
    for _ in range(warmup):
        model(x).sum().backward()
    loss = model(x).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as exc:
        state = gg_monitor.current_state()
        out["diagnosis"] = state.diagnosis_for(exc) if state is not None else None


def _lines(code: str) -> list[int]:
    lines, start = inspect.getsourcelines(_train)
    return [start + offset for offset, line in enumerate(lines) if line.strip() == code]


FIRST_LINE, SECOND_LINE = _lines("loss.backward()")


def test_each_thread_is_told_about_its_own_backward_every_round() -> None:
    model = torch.nn.Linear(8, 1)
    wrong = []
    with gradguard.monitor():
        for round_ in range(ROUNDS):
            barrier = threading.Barrier(2)
            outs: list[dict[str, object]] = [{}, {}]
            threads = [
                threading.Thread(target=_train, args=(model, warmup, barrier, out))
                for warmup, out in zip((3 + round_ % 3, 5), outs, strict=True)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            for out in outs:
                diagnosis = out.get("diagnosis")
                freed = getattr(diagnosis, "freed_by", None)
                failing = getattr(diagnosis, "failing_call", None)
                if (
                    diagnosis is None
                    or getattr(diagnosis, "rule", None) != "GG001"
                    or failing is None
                    or failing.line != SECOND_LINE
                    or freed is None
                    or freed.line != FIRST_LINE
                ):
                    wrong.append((round_, diagnosis))
    assert wrong == []


def test_an_inferred_attribution_says_it_is_unsure_when_other_threads_freed_graphs(
    diagnose,  # type: ignore[no-untyped-def]
) -> None:
    import scenarios

    _, alone = diagnose(scenarios.shared_trunk_first_loss_gone)
    assert alone.freed_by is not None and not alone.freed_by_exact
    assert gg_monitor.THREAD_CAVEAT not in (alone.hint or "")

    def busy() -> None:
        model = torch.nn.Linear(3, 1)
        for _ in range(3):
            model(torch.randn(2, 3)).sum().backward()

    def both() -> None:
        other = threading.Thread(target=busy)
        other.start()
        other.join()
        scenarios.shared_trunk_first_loss_gone()

    _, crowded = diagnose(both)
    assert crowded.freed_by is not None and not crowded.freed_by_exact
    assert gg_monitor.THREAD_CAVEAT in (crowded.hint or "")
    assert crowded.freed_by.line == alone.freed_by.line
