"""Re-check latency of `gradguard server`: an edited 1,000-line training script, through a real client.

    python bench/bench_server.py               # 20 edits back to back, then 10 with 2 s pauses
    python bench/bench_server.py --edits 50 --lines 2000 --pause 0

The script is generated: model and data helpers, metric functions, and a training loop whose hidden state
is not detached (one GG003), padded with more helpers to the requested length. The client (pygls's, over
stdio, as an editor) opens it, then changes one literal in a helper the training loop calls, sending the
whole text as editors do, and times each didChange until its publishDiagnostics arrives. Back to back,
the server's worker process is still analysing the whole file of the previous edit while the next one
is checked; with pauses (someone reading what they typed) it is done.

Printed per series: the wall time (median, best, worst), and the CPU time the server process itself
spent per edit (from /proc, Linux only): on a loaded machine the wall time is mostly waiting for a CPU.
Then the time of the whole-file analysis that the worker runs after each edit (in this process).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))

from lsp_client import Client, session
from lsprotocol import types

HEAD = '''\
import math

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.cell = nn.GRUCell(width, width)
        self.out = nn.Linear(width, 1)

    def forward(self, x, h):
        h = self.cell(x, h)
        return self.out(h), h

'''
HELPER = '''\
def metric_{n}(values: list[float], scale: float = {n}.0) -> float:
    """A running statistic of the losses (helper {n})."""
    total = 0.0
    for index, value in enumerate(values):
        if index % 2 == 0:
            total += value * scale
        else:
            total -= math.sqrt(abs(value)) / (scale + 1)
    return total / max(len(values), 1)


def batch_{n}(size: int = 8, width: int = 16) -> torch.Tensor:
    return torch.randn(size, width) * {n}

'''
TAIL = '''\
def train(steps: int = 10, width: int = 16) -> list[float]:
    model = Encoder(width)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    h = torch.zeros(8, width)
    history: list[float] = []
    for step in range(steps):
        x = batch_1(8, width)
        y, h = model(x, h)
        loss = y.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history


if __name__ == "__main__":
    print(metric_1(train()))
'''


def training_script(lines: int) -> str:
    """A training script of about `lines` lines with one GG003."""
    parts = [HEAD]
    n = 1
    while sum(part.count("\n") for part in parts) + TAIL.count("\n") < lines:
        parts.append(HELPER.format(n=n))
        n += 1
    return "".join(parts) + TAIL


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far, from /proc (None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def edited(text: str, version: int) -> str:
    """The script with one literal of `metric_1` (which the `__main__` block calls) changed."""
    return text.replace("scale: float = 1.0", f"scale: float = {version}.0", 1)


async def measure(series: list[tuple[int, float]], lines: int) -> list[tuple[list[float], list[float]]]:
    """Per series of (edits, pause): the seconds from each didChange to its diagnostics, and the
    server's CPU seconds in that time."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        text = training_script(lines)
        path = root / "train.py"
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()

        async def body(client: Client) -> list[tuple[list[float], list[float]]]:
            pid = client._server.pid if client._server is not None else None  # type: ignore[attr-defined]
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                )
            )
            first = await client.wait_for(uri, timeout=300)
            assert [d.code for d in first] == ["GG003"], [d.code for d in first]
            version = 1
            results = []
            for edits, pause in series:
                timings: list[float] = []
                cpu: list[float] = []
                for _ in range(edits):
                    version += 1
                    await asyncio.sleep(pause)
                    before = cpu_seconds(pid) if pid else None
                    start = time.perf_counter()
                    client.text_document_did_change(
                        types.DidChangeTextDocumentParams(
                            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited(text, version))],
                        )
                    )
                    found = await client.wait_for(uri, timeout=300)
                    timings.append(time.perf_counter() - start)
                    after = cpu_seconds(pid) if pid else None
                    if before is not None and after is not None:
                        cpu.append(after - before)
                    assert [d.code for d in found] == ["GG003"]
                results.append((timings, cpu))
            return results

        return await session(root, body)


def whole_file_seconds(lines: int, repeats: int = 3) -> float:
    """The median time of the whole-file analysis the server's worker runs after an edit."""
    from gradguard.server.checks import lint_text

    text = training_script(lines)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "train.py")
        times = []
        for version in range(repeats):
            start = time.perf_counter()
            lint_text(edited(text, version + 2), path)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print the re-check latency."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--edits", type=int, default=20, help="edits sent back to back")
    parser.add_argument("--paused-edits", type=int, default=10, help="edits sent after a pause")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between paused edits")
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()
    series = [(args.edits, 0.0), (args.paused_edits, args.pause)]
    results = asyncio.run(measure([s for s in series if s[0]], args.lines))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for (edits, pause), (timings, cpu) in zip([s for s in series if s[0]], results, strict=True):
        ms = sorted(t * 1000 for t in timings)
        cpu_text = f", server CPU median {statistics.median(cpu) * 1000:.0f} ms" if cpu else ""
        print(f"{args.lines}-line script, {edits} edits, {pause:g} s apart: re-check median "
              f"{statistics.median(ms):.0f} ms, best {ms[0]:.0f} ms, worst {ms[-1]:.0f} ms{cpu_text}")
    print(f"whole-file analysis (the worker, after each edit): {whole_file_seconds(args.lines) * 1000:.0f} ms")
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
