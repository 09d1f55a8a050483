"""The picture of the cause (SVG) and `gradguard run --report-html`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from test_render_layout import _diagnosis

from gradguard.runtime.picture import html_report, svg

SVG = "{http://www.w3.org/2000/svg}"
DOUBLE_BACKWARD = """\
import torch

w = torch.randn(3, requires_grad=True)
h = torch.zeros(3)
for step in range(2):
    h = torch.tanh(h + w)
    loss = h.sum()
    loss.backward()
"""


def test_the_svg_shows_the_fresh_part_carrier_freed_part_and_freeing_call() -> None:
    picture = ElementTree.fromstring(svg(_diagnosis("train.py")))
    assert picture.tag == f"{SVG}svg"
    kinds = [group.get("class") for group in picture.iter(f"{SVG}g")]
    assert kinds == ["fresh", "carrier", "freed", "freeing"]
    text = " ".join(t.text or "" for t in picture.iter(f"{SVG}text"))
    assert "train.py:37: loss.backward()" in text
    assert "carrier `hidden_state_for_the_next_window`" in text
    assert "freed by call #1" in text and "no retain_graph" in text


def test_the_html_report_is_a_page_with_the_picture_and_the_note() -> None:
    page = html_report(_diagnosis("train.py"))
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "failing call" in page


@pytest.mark.torch
def test_gradguard_run_writes_the_html_report(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(DOUBLE_BACKWARD, encoding="utf-8")
    page = tmp_path / "report.html"
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "gradguard", "run", "--report-html", str(page), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    text = page.read_text(encoding="utf-8")
    assert '<g class="fresh">' in text and '<g class="freed"' in text
    assert "train.py:8" in text
