"""Re-check latency of `gradguard server`: an edited 1,000-line training script, through a real client.

    python bench/bench_server.py               # 20 edits, the median and the worst
    python bench/bench_server.py --edits 50 --lines 2000

The script is generated: model and data helpers, metric functions, and a training loop whose hidden state
is not detached (one GG003), padded with more helpers to the requested length. The client (pygls's, over
stdio, as an editor) opens it, then changes one literal in the middle of the file per edit, sending the
whole text as editors do, and times each didChange until its publishDiagnostics arrives.
"""

from __future__ import annotations

import argparse
import asyncio
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


async def measure(edits: int, lines: int) -> list[float]:
    """Seconds from each didChange to its diagnostics."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        text = training_script(lines)
        path = root / "train.py"
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()

        async def body(client: Client) -> list[float]:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                )
            )
            first = await client.wait_for(uri, timeout=300)
            assert [d.code for d in first] == ["GG003"], [d.code for d in first]
            timings = []
            for version in range(2, edits + 2):
                edited = text.replace("scale: float = 1.0", f"scale: float = {version}.0", 1)
                start = time.perf_counter()
                client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
                    )
                )
                found = await client.wait_for(uri, timeout=300)
                timings.append(time.perf_counter() - start)
                assert [d.code for d in found] == ["GG003"]
            return timings

        return await session(root, body)


def main() -> None:
    """Print the re-check latency."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()
    timings = asyncio.run(measure(args.edits, args.lines))
    ms = sorted(t * 1000 for t in timings)
    print(f"{args.lines}-line script, {args.edits} edits: re-check median {statistics.median(ms):.0f} ms, "
          f"best {ms[0]:.0f} ms, worst {ms[-1]:.0f} ms")


if __name__ == "__main__":
    main()
