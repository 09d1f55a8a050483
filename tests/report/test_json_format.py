"""The JSON output reads like ruff's: same field names and shapes, plus gradguard's `related`."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from report_samples import CWD, all_results, notebook_result, training_result

from gradguard import report

pytestmark = pytest.mark.usefixtures("sample_catalogue")

# The fields of an entry of `ruff check --output-format json` (ruff 0.17).
RUFF_FIELDS = {
    "cell",
    "code",
    "end_location",
    "filename",
    "fix",
    "location",
    "message",
    "name",
    "noqa_row",
    "severity",
    "url",
}
RUFF_FIX_FIELDS = {"applicability", "message", "edits"}
RUFF_EDIT_FIELDS = {"content", "location", "end_location"}
LOCATION_FIELDS = {"row", "column"}


def entries(results: list[Any]) -> list[dict[str, Any]]:
    out = io.StringIO()
    report.emit(results, fmt="json", out=out, color=False, cwd=CWD)
    return json.loads(out.getvalue())


def test_every_entry_has_ruffs_fields_plus_related() -> None:
    for entry in entries(all_results()):
        assert set(entry) == RUFF_FIELDS | {"related"}
        assert set(entry["location"]) == LOCATION_FIELDS
        assert set(entry["end_location"]) == LOCATION_FIELDS
        if entry["fix"] is not None:
            assert set(entry["fix"]) == RUFF_FIX_FIELDS
            assert entry["fix"]["applicability"] in ("safe", "unsafe")
            for edit in entry["fix"]["edits"]:
                assert set(edit) == RUFF_EDIT_FIELDS
                assert set(edit["location"]) == set(edit["end_location"]) == LOCATION_FIELDS
        for related in entry["related"]:
            assert set(related) == {"filename", "location", "end_location", "cell", "message"}


def test_keys_are_sorted_and_indented_like_ruffs() -> None:
    out = io.StringIO()
    report.emit([training_result()], fmt="json", out=out, color=False, cwd=CWD)
    text = out.getvalue()
    assert text.startswith('[\n  {\n    "cell": null,\n    "code": "GG001",\n')
    assert text.endswith("\n]\n")


def test_a_finding_in_a_script() -> None:
    entry = entries([training_result()])[0]
    assert entry["code"] == "GG001"
    assert entry["name"] == "repeated-backward"
    assert entry["filename"] == "/project/train.py"
    assert entry["cell"] is None
    assert entry["location"] == {"row": 41, "column": 13}
    assert entry["end_location"] == {"row": 41, "column": 29}
    assert entry["noqa_row"] == 41
    assert entry["severity"] == "error"
    assert entry["url"] == "https://gradguard.dev/rules/GG001"
    assert entry["fix"]["applicability"] == "unsafe"
    assert entry["fix"]["edits"] == [
        {"content": "", "location": {"row": 38, "column": 1}, "end_location": {"row": 39, "column": 1}}
    ]
    assert [r["message"] for r in entry["related"]] == ["graph freed here", "`loss` assigned here"]
    assert entry["related"][0]["location"] == {"row": 38, "column": 13}


def test_a_finding_in_a_notebook_counts_rows_within_its_cell() -> None:
    entry = entries([notebook_result()])[0]
    assert entry["filename"] == "/project/notebooks/explore.ipynb"
    assert entry["cell"] == 5
    assert entry["location"] == {"row": 6, "column": 5}
    assert entry["noqa_row"] == 6
    assert [(r["cell"], r["location"]["row"]) for r in entry["related"]] == [(5, 3), (3, 2)]


def test_file_errors_are_entries_like_ruffs_invalid_syntax() -> None:
    errors = [e for e in entries(all_results()) if e["code"] == "file-error"]
    assert [(e["filename"], e["location"], e["message"]) for e in errors] == [
        ("/project/broken.py", {"row": 3, "column": 9}, "syntax error: '(' was never closed"),
        ("/project/data/missing.py", {"row": 1, "column": 1}, "no such file or directory"),
    ]
    for entry in errors:
        assert entry["fix"] is None and entry["url"] is None and entry["noqa_row"] is None
        assert entry["name"] == "file-error" and entry["severity"] == "error"


def test_nothing_found_is_an_empty_array() -> None:
    out = io.StringIO()
    report.emit([], fmt="json", out=out, color=False, cwd=CWD)
    assert out.getvalue() == "[]\n"


def test_non_ascii_is_written_as_is_like_ruff() -> None:
    result = training_result()
    diagnostic = replace(result.diagnostics[1], message="`poids` réutilisé")
    out = io.StringIO()
    report.emit([replace(result, diagnostics=(diagnostic,))], fmt="json", out=out, color=False, cwd=CWD)
    assert "réutilisé" in out.getvalue()


def _shape(value: Any) -> Any:
    """The key structure of a JSON value, without the values."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_same_shape_as_a_real_ruff_run(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\n")
    run = subprocess.run(
        ["ruff", "check", "--no-cache", "--isolated", "--select", "F401", "--output-format", "json", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    ruff_entry = json.loads(run.stdout)[0]
    ours = entries([training_result()])
    ours_with_fix = next(e for e in ours if e["fix"] is not None)
    ruff_shape = _shape(ruff_entry)
    our_shape = _shape(ours_with_fix)
    del our_shape["related"]
    assert our_shape == ruff_shape
