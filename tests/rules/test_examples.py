"""Every document's examples against the analyzer: the bad one is flagged exactly at its markers, the
good one by no rule at all, and `--fix --unsafe-fixes` turns the bad one into the fixed one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from doc_support import codes, example, fix_source, params

from gradguard import catalogue
from gradguard.analysis import analyze
from gradguard.cli import main


def _found(source: str) -> list[tuple[int, str]]:
    return [(d.span.start.row, d.code) for d in analyze(source)]


@pytest.mark.parametrize("code", params("bad"))
def test_bad_example_is_flagged_exactly_at_its_markers(code: str) -> None:
    bad = example(catalogue.get(code), "bad")
    assert sorted(_found(bad.source)) == sorted(bad.expected)


@pytest.mark.parametrize("code", params("bad"))
def test_findings_of_the_bad_example_have_the_documents_severity(code: str) -> None:
    doc = catalogue.get(code)
    diagnostics = analyze(example(doc, "bad").source)
    assert diagnostics
    assert {d.severity for d in diagnostics} == {doc.severity}


# The variable each bad example's finding must name: the one that carried the stale graph (or, for
# the warnings, the one kept alive). Several names are right where the graph reaches the failing call
# through more than one variable.
CARRIERS = {
    "GG001": ("loss",),
    "GG002": ("features",),
    "GG003": ("hidden",),
    "GG004": ("total_loss",),
    "GG005": ("fake",),
    "GG006": ("centers",),
    "GG007": ("scores", "s_real", "s_fake"),
    "GG008": ("loss",),
    "GG009": ("loss",),
    "GG010": ("history",),
    "GG011": ("q",),
    "GG100": ("GG001",),  # no variable: the finding names the code the directive lists in vain
}


def test_every_document_has_a_carrier_expectation() -> None:
    assert sorted(CARRIERS) == codes()


@pytest.mark.parametrize("code", params("carrier"))
def test_the_finding_names_the_carrier(code: str) -> None:
    for diagnostic in analyze(example(catalogue.get(code), "bad").source):
        quoted = re.findall(r"`([^`]*)`", diagnostic.message)
        dotted = [
            word for text in quoted for word in re.findall(r"[A-Za-z_][\w.]*", text)
        ]
        # `loss.backward()` names `loss`
        named = set(dotted) | {word.split(".")[0] for word in dotted}
        assert named & set(CARRIERS[code]), diagnostic.message


@pytest.mark.parametrize("code", params("good"))
def test_good_example_is_clean_for_every_rule(code: str) -> None:
    assert _found(example(catalogue.get(code), "good").source) == []


@pytest.mark.parametrize("code", params("fix"))
def test_fixing_the_bad_example_gives_the_fixed_example(code: str) -> None:
    doc = catalogue.get(code)
    assert fix_source(example(doc, "bad").source) == example(doc, "fixed").source


@pytest.mark.parametrize("code", params("fixed"))
def test_the_fixed_example_is_clean_and_a_fixed_point(code: str) -> None:
    fixed = example(catalogue.get(code), "fixed").source
    assert _found(fixed) == []
    assert fix_source(fixed) == fixed


def test_the_fix_helper_does_what_the_cli_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fix_source` is the engine's fix loop; `gradguard lint --fix --unsafe-fixes` must write the same."""
    bad = {code: example(catalogue.get(code), "bad").source for code in codes()}
    for code, source in bad.items():
        (tmp_path / f"{code.lower()}.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["lint", "--fix", "--unsafe-fixes", "--no-cache", "-q", "."]
    )
    assert result.exit_code in (0, 1), result.output
    for code, source in bad.items():
        written = (tmp_path / f"{code.lower()}.py").read_text(encoding="utf-8")
        assert written == fix_source(source), code
