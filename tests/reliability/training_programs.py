"""Hypothesis strategies that build training-loop-shaped Python programs from random statements.

The programs are always valid Python (CPython parses them) but need not run: names may be unbound and
shapes may not match. What matters is that they look like the code gradguard exists for: imports,
a model and an optimizer, helper functions, classes with `forward`, epoch/batch loops with forward,
loss, backward (with retain_graph/create_graph variants, `torch.autograd.backward/grad` under several
import spellings), step and zero_grad, `detach`/`item`/`no_grad`, accumulators and lists, branches,
`break`/`continue`, `try`, closures, so that the analysis and its fixes meet many shapes of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import strategies as st

IMPORTS = (
    "import torch.nn as nn",
    "import torch.nn.functional as F",
    "from torch import nn, optim",
    "import torch.autograd as ag",
    "from torch.autograd import grad",
    "from torch import autograd",
    "import torch.optim as optim",
    "from torch.utils.data import DataLoader, TensorDataset",
)

SIMPLE = (
    "x = torch.randn(8, 4)",
    "y = torch.randn(8, 1)",
    "x = x.requires_grad_()",
    "out = model(x)",
    "out = model(x) + h",
    "out, h = rnn(x, h)",
    "h = out",
    "h = out.detach()",
    "h = h.detach()",
    "h.detach_()",
    "h = torch.zeros(8, 1)",
    "loss = out.sum()",
    "loss = F.mse_loss(out, y)",
    "loss = (out * w).mean()",
    "loss = criterion(out, y)",
    "loss = compute_loss(model, x, y)",
    "loss = loss + penalty(out, x)",
    "loss2 = out.pow(2).mean()",
    "loss = loss + loss2",
    "loss.backward()",
    "loss.backward(retain_graph=True)",
    "loss.backward(create_graph=True)",
    "loss2.backward()",
    "loss2.backward(retain_graph=False)",
    "torch.autograd.backward(loss)",
    "torch.autograd.backward([loss, loss2])",
    "ag.backward(loss, retain_graph=True)",
    "g = torch.autograd.grad(loss, model.parameters())",
    "g = grad(loss, [w], create_graph=True)",
    "g = ag.grad(loss, w, retain_graph=True)",
    "(g[0] ** 2).sum().backward()",
    "(loss + loss2).backward()",
    "total.backward()",
    "torch.stack(losses).sum().backward()",
    "opt.step()",
    "opt.zero_grad()",
    "opt.zero_grad(set_to_none=True)",
    "model.zero_grad()",
    "total = total + loss",
    "total += loss",
    "total += loss.item()",
    "total = 0.0",
    "total = torch.zeros(())",
    "losses.append(loss)",
    "losses.append(loss.item())",
    "losses.append(loss.detach())",
    "losses = []",
    "value = loss.item()",
    "value = float(loss)",
    "out = out.detach()",
    "del loss",
    "print(loss.item())",
    "print(f'{epoch}: {loss.item():.3f}')",
    "step(loss)",
    "w = model.weight * 2",
    "w = w.detach()",
    "z = torch.randn(8, 2)",
    "fake = gen(z)",
    "d_loss = disc(fake).mean()",
    "d_loss = disc(fake.detach()).mean()",
    "g_loss = -disc(fake).mean()",
    "d_loss.backward()",
    "g_loss.backward()",
    "self_cache = model.weight.sum()",
    "dist = torch.distributions.Normal(model.weight, 1.0)",
    "loss = -dist.log_prob(y).mean()",
    "history = [l.item() for l in losses]",
    "scheduler.step()",
    "pass",
)

CONDITIONS = (
    "i % 2 == 0",
    "step > 1",
    "loss.item() > 0.5",
    "epoch == 0",
    "use_aux",
    "torch.rand(()) > 0.5",
    "not losses",
)

HELPERS = (
    """\
def compute_loss(model, x, y):
    out = model(x)
    return F.mse_loss(out, y)
""",
    """\
def step(loss):
    loss.backward()
    opt.step()
    opt.zero_grad()
""",
    """\
def step(loss):
    loss.backward(retain_graph=True)
""",
    """\
def penalty(out, x):
    g = torch.autograd.grad(out.sum(), x, create_graph=True)[0]
    return g.pow(2).mean()
""",
    """\
def repackage(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage(v) for v in h)
""",
    """\
@torch.no_grad()
def evaluate(model, x):
    return model(x).sum().item()
""",
    """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.h = None
    def forward(self, x):
        out = self.fc(x)
        if self.h is not None:
            out = out + self.h
        self.h = out
        return out
""",
    """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.scale = self.fc.weight * 2
    def forward(self, x):
        return self.fc(x) * self.scale.sum()
""",
    """\
class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
    def step(self, x, y):
        self.out = self.model(x)
        loss = F.mse_loss(self.out, y)
        loss.backward()
        return loss.item()
""",
)

MODELS = ("model = nn.Linear(4, 1)", "model = Net()", "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU())")
OPTIMIZERS = (
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
    "opt = optim.Adam(model.parameters())",
    "opt = torch.optim.LBFGS(model.parameters())",
)
WITH_HEADERS = (
    "with torch.no_grad():",
    "with torch.enable_grad():",
    "with torch.inference_mode():",
    "with torch.autocast('cpu'):",
)

Line = tuple[int, str]  # (indent level, text)


@dataclass(frozen=True)
class Style:
    """How a program is written out: its indentation unit and line ending."""

    indent: str
    newline: str


def render(lines: list[Line], style: Style) -> str:
    """The program text."""
    return "".join(f"{style.indent * level}{text}{style.newline}" for level, text in lines)


def _nested(lines: list[Line], by: int) -> list[Line]:
    return [(level + by, text) for level, text in lines]


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, in_loop: bool = False, in_function: bool = False) -> list[Line]:
    """A non-empty block of statements at indent level 0."""
    kinds = ["simple"] * 6
    if depth < 3:
        kinds += ["if", "for", "while", "with", "try", "closure"]
    if in_loop:
        kinds += ["jump"]
    if in_function:
        kinds += ["return"]
    lines: list[Line] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(kinds))
        inner = {"depth": depth + 1, "in_loop": in_loop, "in_function": in_function}
        if kind == "simple":
            lines.append((0, draw(st.sampled_from(SIMPLE))))
        elif kind == "if":
            lines.append((0, f"if {draw(st.sampled_from(CONDITIONS))}:"))
            lines += _nested(draw(blocks(**inner)), 1)
            if draw(st.booleans()):
                lines.append((0, f"elif {draw(st.sampled_from(CONDITIONS))}:"))
                lines += _nested(draw(blocks(**inner)), 1)
            if draw(st.booleans()):
                lines.append((0, "else:"))
                lines += _nested(draw(blocks(**inner)), 1)
        elif kind == "for":
            variable = draw(st.sampled_from(("i", "step", "batch")))
            lines.append((0, f"for {variable} in range({draw(st.integers(1, 4))}):"))
            lines += _nested(draw(blocks(depth + 1, True, in_function)), 1)
        elif kind == "while":
            lines.append((0, "while step < 3:"))
            lines += _nested(draw(blocks(depth + 1, True, in_function)), 1)
            lines.append((1, "step += 1"))
        elif kind == "with":
            lines.append((0, draw(st.sampled_from(WITH_HEADERS))))
            lines += _nested(draw(blocks(**inner)), 1)
        elif kind == "try":
            lines.append((0, "try:"))
            lines += _nested(draw(blocks(**inner)), 1)
            handler = draw(st.sampled_from(("except RuntimeError as err:", "except Exception:", None)))
            if handler is not None:
                lines.append((0, handler))
                lines += _nested(draw(blocks(**inner)), 1)
            if handler is None or draw(st.booleans()):
                lines.append((0, "finally:"))
                lines += _nested(draw(blocks(**inner)), 1)
        elif kind == "closure":
            lines.append((0, "def closure():"))
            lines += _nested(draw(blocks(depth + 1, False, True)), 1)
            lines.append((1, "return loss"))
            lines.append((0, "opt.step(closure)"))
        elif kind == "jump":
            lines.append((0, f"if {draw(st.sampled_from(CONDITIONS))}:"))
            lines.append((1, draw(st.sampled_from(("break", "continue")))))
        else:
            lines.append((0, draw(st.sampled_from(("return loss", "return loss.item()", "return")))))
    return lines


@st.composite
def program_lines(draw: st.DrawFn) -> list[Line]:
    """A whole training script as lines: imports, helpers, model, optimizer, loops, epilogue."""
    lines: list[Line] = [(0, "import torch")]
    lines += [(0, text) for text in draw(st.lists(st.sampled_from(IMPORTS), max_size=4, unique=True))]
    lines.append((0, ""))
    for helper in draw(st.lists(st.sampled_from(HELPERS), max_size=3, unique=True)):
        for text in helper.splitlines():
            stripped = text.lstrip(" ")
            lines.append(((len(text) - len(stripped)) // 4, stripped))
        lines.append((0, ""))
    body: list[Line] = [
        (0, draw(st.sampled_from(MODELS))),
        (0, draw(st.sampled_from(OPTIMIZERS))),
    ]
    body += draw(st.lists(st.sampled_from(SIMPLE), max_size=4).map(lambda found: [(0, s) for s in found]))
    loop = draw(blocks(depth=1, in_loop=True))
    if draw(st.booleans()):
        body.append((0, "for epoch in range(2):"))
        body.append((1, f"for i in range({draw(st.integers(1, 5))}):"))
        body += _nested(loop, 2)
    else:
        body.append((0, "for i in range(3):"))
        body += _nested(loop, 1)
    body += draw(st.lists(st.sampled_from(SIMPLE), max_size=3).map(lambda found: [(0, s) for s in found]))
    if draw(st.booleans()):
        lines.append((0, "def train(model, opt, x, y, h, w, losses, total, use_aux=False):"))
        lines += _nested(body, 1)
        lines.append((0, ""))
        lines.append((0, 'if __name__ == "__main__":'))
        lines.append((1, "train(model, opt, x, y, h, w, [], 0.0)"))
    else:
        lines += body
    return lines


styles = st.builds(
    Style,
    indent=st.sampled_from(("    ", "    ", "  ", "\t")),
    newline=st.sampled_from(("\n", "\n", "\r\n")),
)


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A training-loop-shaped Python script."""
    return render(draw(program_lines()), draw(styles))


TITLES = ("# Training\n", "# Entraînement — “café” 🔥\n", "Notes </script>\n")
IPYTHON_LINES = ("%matplotlib inline", "% matplotlib inline", "!nvidia-smi", "%load_ext autoreload", "files = !ls", "torch.randn?")


@st.composite
def notebooks(draw: st.DrawFn) -> str:
    """A notebook (nbformat 4 JSON) whose code cells hold a training program, with markdown cells and
    IPython magics between them."""
    lines = draw(program_lines())
    # Cells may only start where a top-level statement starts (no cell splits a block or a decorator).
    starts = [
        index
        for index, (level, text) in enumerate(lines)
        if index
        and level == 0
        and text
        and not text.startswith(("else", "elif", "except", "finally"))
        and not lines[index - 1][1].startswith("@")
    ]
    cuts = sorted(draw(st.sets(st.sampled_from(starts), max_size=4))) if starts else []
    pieces, previous = [], 0
    for cut in [*cuts, len(lines)]:
        pieces.append(lines[previous:cut])
        previous = cut
    cells: list[dict[str, object]] = []
    for piece in pieces:
        if draw(st.booleans()):
            cells.append(
                {"cell_type": "markdown", "metadata": {}, "source": ["Call `loss.backward()` once.\n"]}
            )
        magics = [(0, line) for line in draw(st.lists(st.sampled_from(IPYTHON_LINES), max_size=2))]
        text = render(magics + piece, Style("    ", "\n")).rstrip("\n")
        source: object = text.splitlines(keepends=True) if draw(st.booleans()) else text
        cells.append(
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
        )
    cells.insert(0, {"cell_type": "markdown", "metadata": {}, "source": [draw(st.sampled_from(TITLES))]})
    document = {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    # Written the ways tools write notebooks: the indent, escaped or raw non-ASCII text, the line ending.
    text = json.dumps(
        document, indent=draw(st.sampled_from((1, 2, "\t", None))), ensure_ascii=draw(st.booleans())
    )
    text += draw(st.sampled_from(("\n", "")))
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text
