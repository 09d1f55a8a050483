"""`gradguard rule CODE` and `gradguard rule --all` as rendered with rich."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from gradguard import catalogue
from gradguard.report.rule_doc import render_catalogue, render_rule


def console(color: bool = False) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=100, force_terminal=color, color_system="standard" if color else None), out


@pytest.mark.usefixtures("sample_catalogue")
def test_a_rule_shows_its_front_matter_then_its_document() -> None:
    term, out = console()
    render_rule(catalogue.get("GG001"), term)
    text = out.getvalue()
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[0] == "GG001 repeated-backward"
    assert lines[1] == "A graph is backward-ed again after a backward freed it."
    assert any(line.split() == ["Severity", "error"] for line in lines)
    assert any(line.startswith("Fix") and "--unsafe-fixes" in line for line in lines)
    assert any(line.startswith("Explains") and "backward through the graph a second time" in line for line in lines)
    assert any("https://gradguard.dev/rules/GG001" in line for line in lines)
    assert "What it does" in text
    assert "loss.backward()" in text
    assert "[GG001]" not in text  # the test markers of the examples are not for readers
    assert "\x1b" not in text


@pytest.mark.usefixtures("sample_catalogue")
def test_a_rule_in_colour() -> None:
    term, out = console(color=True)
    render_rule(catalogue.get("GG003"), term)
    assert "\x1b[" in out.getvalue()


@pytest.mark.usefixtures("sample_catalogue")
def test_the_catalogue_table() -> None:
    term, out = console()
    render_catalogue(catalogue.load().values(), term)
    rows = [line.split() for line in out.getvalue().splitlines()]
    assert rows[0] == ["Code", "Name", "Severity", "Fix", "Summary"]
    codes = [row[0] for row in rows[1:] if row and row[0].startswith("GG")]
    assert codes == ["GG001", "GG003", "GG010"]
    gg010 = next(row for row in rows if row and row[0] == "GG010")
    assert gg010[1:4] == ["graph-kept-for-logging", "warning", "safe"]


@pytest.mark.parametrize("width", [40, 60, 89])
def test_a_narrow_terminal_never_breaks_a_code_or_name_nor_cuts_a_summary(width: int) -> None:
    docs = list(catalogue.load().values())
    out = io.StringIO()
    render_catalogue(docs, Console(file=out, width=width, color_system=None))
    lines = out.getvalue().splitlines()
    assert "\u2026" not in out.getvalue()
    assert all(len(line) <= width for line in lines)
    text = " ".join(" ".join(lines).split())
    for doc in docs:
        assert f"{doc.code}  {doc.name}" in lines
        assert f"{doc.severity.value}, {doc.fix_applicability.value} fix. {' '.join(doc.summary.split())}" in text


def test_every_real_rule_document_renders() -> None:
    docs = list(catalogue.load().values())
    if not docs:
        pytest.skip("the catalogue in rules/ is empty")
    for doc in docs:
        term, out = console()
        render_rule(doc, term)
        assert out.getvalue().startswith(f"{doc.code} {doc.name}\n")
        assert "# [GG" not in out.getvalue()
    term, out = console()
    render_catalogue(docs, term)
    for doc in docs:
        assert doc.code in out.getvalue()
