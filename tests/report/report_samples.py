"""Hand-made lint results for the report tests: a training script, a notebook, broken and missing files.

Positions are found in the sample texts rather than counted by hand, so the samples read like real code
and stay right when edited. `SAMPLE_DOCS` stands in for the catalogue (see conftest.py).
"""

from __future__ import annotations

from pathlib import Path

from gradguard import catalogue
from gradguard.model import (
    Applicability,
    Diagnostic,
    Edit,
    FileError,
    FileResult,
    Fix,
    Note,
    Related,
    Severity,
    Span,
)

CWD = Path("/project")

TRAIN_SCRIPT = '''\
"""Train a small regressor on synthetic data, with an L1 penalty on the weights."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(8, width),
            nn.ReLU(),
            nn.Linear(width, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def make_loader(n: int = 512, batch_size: int = 32) -> DataLoader:
    x = torch.randn(n, 8)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(n, 1)
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True)


def train(epochs: int, l1_weight: float) -> list:
    model = Regressor()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    loader = make_loader()
    history = []
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            l1 = sum(p.abs().sum() for p in model.parameters())
            total = loss + l1_weight * l1
            total.backward()
            optimizer.step()
            history.append(loss)
        print(f"epoch {epoch}: last loss {history[-1]:.4f}")
    return history


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--l1", type=float, default=1e-4)
    args = parser.parse_args()
    history = train(args.epochs, args.l1)
    print(f"final loss: {history[-1]:.4f}")


if __name__ == "__main__":
    main()
'''

NOTEBOOK_CELLS = (
    (
        2,
        "import torch\n"
        "import torch.nn as nn\n"
        "\n"
        "rnn = nn.RNNCell(8, 16)\n"
        "head = nn.Linear(16, 1)\n"
        "opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)",
    ),
    (3, "%matplotlib inline\nhidden = torch.zeros(4, 16)"),
    (
        5,
        "for step in range(100):\n"
        "    x = torch.randn(4, 8)\n"
        "    hidden = rnn(x, hidden)\n"
        "    loss = head(hidden).pow(2).mean()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()",
    ),
)

BROKEN_SCRIPT = "import torch\n\ndef step(model, batch:\n    loss = model(batch).sum()\n    loss.backward()\n"


def span_of(source: str, needle: str, occurrence: int = 1) -> Span:
    """The span of the `occurrence`-th `needle` in `source` (single-line needles)."""
    index = -1
    for _ in range(occurrence):
        index = source.index(needle, index + 1)
    row = source.count("\n", 0, index) + 1
    column = index - (source.rfind("\n", 0, index) + 1) + 1
    return Span.of(row, column, row, column + len(needle))


def line_span(source: str, needle: str) -> Span:
    """The span of the whole line holding `needle`, newline included (for deleting the line)."""
    row = span_of(source, needle).start.row
    return Span.of(row, 1, row + 1, 1)


def training_result() -> FileResult:
    """A 60-line training script: a second backward through a freed graph, and a loss kept for logging."""
    source = TRAIN_SCRIPT
    double = Diagnostic(
        code="GG001",
        message="`total` backward-s through the graph of `loss`, already freed by `loss.backward()`",
        span=span_of(source, "total.backward()"),
        severity=Severity.ERROR,
        fix=Fix(
            message="Backward once, through `total` (which includes `loss`)",
            applicability=Applicability.UNSAFE,
            edits=(Edit(line_span(source, "            loss.backward()"), ""),),
        ),
        related=(
            Related(span_of(source, "loss.backward()"), "graph freed here"),
            Related(span_of(source, "loss = criterion(model(x), y)"), "`loss` assigned here"),
        ),
    )
    logging = Diagnostic(
        code="GG010",
        message="`history` keeps the graph of every step's `loss` alive",
        span=span_of(source, "history.append(loss)"),
        severity=Severity.WARNING,
        fix=Fix(
            message="Log the number: `loss.item()`",
            applicability=Applicability.SAFE,
            edits=(Edit(span_of(source, "(loss)", 1), "(loss.item())"),),
        ),
    )
    return FileResult(path="train.py", diagnostics=(logging, double), source=source)


def notebook_result() -> FileResult:
    """A notebook whose RNN hidden state carries the previous step's graph into the next backward."""
    cell3 = NOTEBOOK_CELLS[1][1]
    cell5 = NOTEBOOK_CELLS[2][1]
    diagnostic = Diagnostic(
        code="GG003",
        message="`hidden` carries the previous step's graph, freed by its `loss.backward()`, into this one",
        span=span_of(cell5, "loss.backward()"),
        severity=Severity.ERROR,
        fix=Fix(
            message="Detach the carried state: `rnn(x, hidden.detach())`",
            applicability=Applicability.SAFE,
            edits=(Edit(span_of(cell5, "hidden)"), "hidden.detach())"),),
        ),
        related=(
            Related(span_of(cell5, "hidden = rnn(x, hidden)"), "`hidden` carried across iterations here"),
            Related(span_of(cell3, "hidden = torch.zeros(4, 16)"), "`hidden` first assigned here"),
        ),
        cell=5,
        related_cells=(5, 3),
    )
    return FileResult(
        path="notebooks/explore.ipynb",
        diagnostics=(diagnostic,),
        cells=NOTEBOOK_CELLS,
        incomplete=(Note("analysis incomplete in module level: a loop did not reach a fixed point", 2, 5),),
    )


def broken_result() -> FileResult:
    """A file with a syntax error: a file error with a line, and the source to show it."""
    return FileResult(
        path="broken.py",
        errors=(FileError("broken.py", "syntax error: '(' was never closed", 3, 9),),
        source=BROKEN_SCRIPT,
    )


def missing_result() -> FileResult:
    """A path that does not exist: a file error without a line."""
    return FileResult(path="data/missing.py", errors=(FileError("data/missing.py", "no such file or directory"),))


def partial_result() -> FileResult:
    """A file the analysis did not follow to the end: one function past its step budget, and the module."""
    return FileResult(
        path="trainer.py",
        source=TRAIN_SCRIPT,
        incomplete=(
            Note("analysis incomplete in train(): step budget exhausted", span_of(TRAIN_SCRIPT, "def train").start.row),
            Note("analysis incomplete in module level: nesting too deep"),
        ),
    )


def clean_result() -> FileResult:
    """A file with nothing to report."""
    return FileResult(path="clean.py", source="import torch\n")


def all_results() -> list[FileResult]:
    """Every sample, in the shuffled order a parallel run may return them."""
    return [notebook_result(), missing_result(), partial_result(), training_result(), clean_result(), broken_result()]


def _doc(code: str, name: str, severity: Severity, fix: Applicability, summary: str, body: str) -> catalogue.RuleDoc:
    return catalogue.RuleDoc(
        code=code,
        name=name,
        message=summary,
        fix_title="",
        severity=severity,
        fix_applicability=fix,
        torch_error="RuntimeError: Trying to backward through the graph a second time",
        summary=summary,
        path=Path(f"rules/{code}-{name}.md"),
        body=body,
        examples=(),
    )


SAMPLE_DOCS = {
    "GG001": _doc(
        "GG001",
        "repeated-backward",
        Severity.ERROR,
        Applicability.UNSAFE,
        "A graph is backward-ed again after a backward freed it.",
        "## What it does\nFinds a second `backward()` through a freed graph.\n\n## Example\n"
        "```python bad\nloss.backward()\nloss.backward()  # [GG001]\n```\n",
    ),
    "GG003": _doc(
        "GG003",
        "state-not-detached",
        Severity.ERROR,
        Applicability.SAFE,
        "State carried across iterations keeps the previous step's graph.",
        "## What it does\nFinds hidden state carried across iterations without `.detach()`.\n",
    ),
    "GG010": _doc(
        "GG010",
        "graph-kept-for-logging",
        Severity.WARNING,
        Applicability.SAFE,
        "Loss tensors kept for logging keep every step's graph alive.",
        "## What it does\nFinds losses appended to a list for logging.\n",
    ),
}
