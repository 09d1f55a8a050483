"""Helpers for the end-to-end tests of `gradguard lint`: sample sources, a project folder, the CLI
in-process and as a subprocess."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gradguard.cli import main

REPO = Path(__file__).resolve().parents[2]

# The plainest GG001: the same loss backward-ed twice without retain_graph (the second call raises).
GG001_SOURCE = """\
import torch

w = torch.randn(3, requires_grad=True)
loss = (w * 2).sum()
loss.backward()
loss.backward()
"""
GG001_ROW = 6

CLEAN_SOURCE = """\
import torch

w = torch.randn(3, requires_grad=True)
for step in range(3):
    loss = (w * 2).sum()
    loss.backward()
"""

NO_TORCH_SOURCE = "def add(a, b):\n    return a + b\n"


@dataclass
class Project:
    """A temporary project folder; `write` creates files, `lint` runs the CLI in it."""

    root: Path
    monkeypatch: pytest.MonkeyPatch

    def write(self, relative: str, text: str | bytes, *, newline: str | None = None) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8", newline=newline)
        return path

    def lint(self, *args: str, cwd: Path | None = None) -> Result:
        """`gradguard lint ARGS` through click's runner, in `cwd` (default: the project root)."""
        self.monkeypatch.chdir(cwd or self.root)
        return CliRunner().invoke(main, ["lint", *args], catch_exceptions=False)

    def lint_json(self, *args: str) -> tuple[Result, list[dict]]:
        result = self.lint("--output-format", "json", *args)
        return result, json.loads(result.stdout)

    def codes_by_file(self, *args: str) -> dict[str, list[tuple[str, int]]]:
        """{filename relative to the root: [(code, row), ...]} from the JSON output."""
        result, findings = self.lint_json(*args)
        assert result.exit_code in (0, 1, 2), result.output
        out: dict[str, list[tuple[str, int]]] = {}
        for finding in findings:
            name = os.path.relpath(finding["filename"], self.root).replace(os.sep, "/")
            out.setdefault(name, []).append((finding["code"], finding["location"]["row"]))
        return out


def subprocess_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a `python -m gradguard` subprocess that imports this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.pop("NO_COLOR", None)
    env.update(extra or {})
    return env
