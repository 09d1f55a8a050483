"""What the runtime monitor costs: step times, cost per backward call, and diagnosis time.

    python bench/bench_monitor.py [--blocks 40] [--steps 25] [--json out.json]

In one run, for three CPU training loops (a tiny MLP, an LSTM, a small transformer encoder block),
the step time (zero_grad, forward, loss, backward, optimizer step) is measured in four variants:

- plain: no monitor;
- monitor: `gradguard.install()` (the default mode);
- deep: `gradguard.install(deep=True)` (module-output creation sites + held roots);
- anomaly: `torch.autograd.set_detect_anomaly(True)`, what users reach for today.

Variants run in randomly ordered, interleaved rounds of blocks (installation happens between blocks,
never inside the timing). Times are CPU time of the (single) torch thread, so waiting for a busy CPU
does not count; each round gives one ratio per variant against the plain block of the same round,
and the medians over rounds are reported, with the ratio of deep mode's added time to anomaly mode's
added time. Then the cost of one backward call through the
monitor is measured on a tiny graph (interleaved plain/monitor calls, median difference), and the time
the monitor takes to diagnose a stale graph of about 10,000 fresh nodes.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
import torch.nn.functional as F
from torch import nn

from gradguard.runtime import monitor

VARIANTS = ("plain", "monitor", "deep", "anomaly")


def mlp_step() -> Callable[[], None]:
    """The tiniest loop: a 32-64-10 MLP, batch 16."""
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def lstm_step() -> Callable[[], None]:
    """nn.LSTM(32, 64) over 20 steps, batch 16, with a linear head."""
    lstm, head = nn.LSTM(32, 64), nn.Linear(64, 10)
    opt = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.01)
    x, y = torch.randn(20, 16, 32), torch.randint(0, 10, (16,))

    def step() -> None:
        opt.zero_grad()
        out, _ = lstm(x)
        F.cross_entropy(head(out[-1]), y).backward()
        opt.step()

    return step


def transformer_step() -> Callable[[], None]:
    """One encoder block (d_model 64, 4 heads, feed-forward 128), batch 8, sequence 16."""
    block = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0, batch_first=True)
    head = nn.Linear(64, 10)
    opt = torch.optim.Adam([*block.parameters(), *head.parameters()], lr=1e-3)
    x, y = torch.randn(8, 16, 64), torch.randint(0, 10, (8,))

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(head(block(x).mean(1)), y).backward()
        opt.step()

    return step


WORKLOADS: dict[str, Callable[[], Callable[[], None]]] = {
    "mlp": mlp_step,
    "lstm": lstm_step,
    "transformer": transformer_step,
}


@contextmanager
def variant(name: str) -> Iterator[None]:
    """Run the block under one variant; set-up and tear-down stay outside the timing."""
    if name == "plain":
        yield
    elif name in ("monitor", "deep"):
        monitor.install(deep=name == "deep")
        try:
            yield
        finally:
            monitor.uninstall()
    else:
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            yield


def time_block(step: Callable[[], None], steps: int) -> float:
    """CPU seconds of this thread per step over one block of `steps` steps."""
    started = time.thread_time_ns()
    for _ in range(steps):
        step()
    return (time.thread_time_ns() - started) / steps / 1e9


def step_times(blocks: int, steps: int, rng: random.Random) -> dict[str, dict[str, dict[str, float]]]:
    """Per workload: median seconds per step and median per-round ratio to plain, for each variant."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    for workload, make in WORKLOADS.items():
        step = make()
        for name in VARIANTS:
            with variant(name):
                time_block(step, steps)
        samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
        ratios: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for _ in range(blocks):
            order = list(VARIANTS)
            rng.shuffle(order)
            round_times: dict[str, float] = {}
            for name in order:
                with variant(name):
                    gc.collect()
                    gc.disable()
                    try:
                        round_times[name] = time_block(step, steps)
                    finally:
                        gc.enable()
            for name in VARIANTS:
                samples[name].append(round_times[name])
                ratios[name].append(round_times[name] / round_times["plain"])
        results[workload] = {
            "seconds": {name: statistics.median(values) for name, values in samples.items()},
            "ratios": {name: statistics.median(values) for name, values in ratios.items()},
        }
    return results


def backward_call_cost(rounds: int, calls: int) -> tuple[float, float]:
    """(plain us, added us) per backward call of a tiny graph, median over interleaved rounds."""
    x = torch.randn(4, requires_grad=True)

    def calls_of() -> float:
        started = time.thread_time_ns()
        for _ in range(calls):
            (x * 2).sum().backward()
        return (time.thread_time_ns() - started) / calls / 1e3

    plain: list[float] = []
    added: list[float] = []
    for _ in range(rounds):
        base = calls_of()
        with variant("monitor"):
            watched = calls_of()
        plain.append(base)
        added.append(watched - base)
    return statistics.median(plain), statistics.median(added)


def diagnosis_time(nodes: int, repeats: int) -> tuple[float, int]:
    """(median seconds the monitor adds to a failing call, fresh nodes in its graph)."""
    weight = torch.randn(8, requires_grad=True)

    def failing_call(watched: bool) -> float:
        h = torch.zeros(8)
        for _ in range(nodes // 2):
            h = torch.tanh(h * weight)
        h.sum().backward()
        for _ in range(nodes // 2):
            h = torch.tanh(h * weight)
        loss = h.sum()
        started = time.perf_counter()
        try:
            if watched:
                with variant("monitor"):
                    loss.backward()
            else:
                loss.backward()
        except RuntimeError as exc:
            if watched:
                assert exc.__notes__ and "`h`" in exc.__notes__[0], exc.__notes__
            return time.perf_counter() - started
        raise AssertionError("the stale graph did not raise")

    spent = []
    for _ in range(repeats):
        plain = failing_call(False)
        spent.append(failing_call(True) - plain)
    return statistics.median(spent), nodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=40, help="timed blocks per variant (default 40)")
    parser.add_argument("--steps", type=int, default=25, help="steps per block (default 25)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rng = random.Random(args.seed)
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, 1 thread, {args.blocks} blocks x {args.steps} steps")

    times = step_times(args.blocks, args.steps, rng)
    print(f"\n{'loop':<12}{'plain ms':>10}{'monitor':>10}{'deep':>10}{'anomaly':>10}{'deep/anomaly added':>21}")
    summary: dict[str, Any] = {"steps": {}}
    for workload, row in times.items():
        plain = row["seconds"]["plain"]
        ratios = row["ratios"]
        anomaly_added = ratios["anomaly"] - 1
        share = (ratios["deep"] - 1) / anomaly_added if anomaly_added > 0 else float("nan")
        print(
            f"{workload:<12}{plain * 1e3:>10.3f}{ratios['monitor']:>9.3f}x{ratios['deep']:>9.3f}x"
            f"{ratios['anomaly']:>9.3f}x{share:>20.3f}"
        )
        summary["steps"][workload] = {**row, "deep_over_anomaly_added": share}

    plain_us, added_us = backward_call_cost(rounds=31, calls=2000)
    print(f"\nbackward call on a tiny graph: {plain_us:.1f} us plain, +{added_us:.2f} us with the monitor")
    summary["backward_call_us"] = {"plain": plain_us, "added": added_us}

    seconds, nodes = diagnosis_time(nodes=10_000, repeats=5)
    print(f"diagnosis of a stale graph with {nodes} fresh nodes: {seconds * 1e3:.1f} ms")
    summary["diagnosis_ms"] = {"nodes": nodes, "ms": seconds * 1e3}

    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
