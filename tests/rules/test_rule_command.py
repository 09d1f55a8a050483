"""`gradguard rule CODE` prints the rule's document: front matter, every section, the examples."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from doc_support import SECTIONS, codes, example

from gradguard import catalogue
from gradguard.cli import main


@pytest.mark.parametrize("code", codes())
def test_rule_prints_its_document(code: str) -> None:
    doc = catalogue.get(code)
    result = CliRunner().invoke(
        main, ["rule", code.lower()], env={"NO_COLOR": "1", "COLUMNS": "120"}
    )
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith(f"{doc.code} {doc.name}\n")
    lines = [line.strip() for line in text.splitlines()]
    headings = [line for line in lines if line in SECTIONS]
    assert headings == list(SECTIONS)
    for kind in ("bad", "good", "fixed"):
        backward = next(
            line.strip()
            for line in example(doc, kind).source.splitlines()
            if ".backward(" in line or "fit(" in line
        )
        assert backward in text, f"{kind} example not shown"
    assert "# [GG" not in text
    assert "\x1b[" not in text
    # The runtime error the rule explains; GG100's directives raise none, so it names none.
    assert ("Explains" in text) == bool(doc.torch_error)


def test_rule_all_lists_every_document() -> None:
    result = CliRunner().invoke(
        main, ["rule", "--all"], env={"NO_COLOR": "1", "COLUMNS": "160"}
    )
    assert result.exit_code == 0, result.output
    for doc in catalogue.load().values():
        assert any(
            line.split()[:2] == [doc.code, doc.name]
            for line in result.output.splitlines()
            if line.strip()
        )
