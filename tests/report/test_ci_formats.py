"""The CI formats (gitlab, junit, pylint, json-lines, rdjson) against the shapes their consumers document.

GitLab: https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format (an array of issues;
`description`, `check_name`, `fingerprint`, `severity` in info/minor/major/critical/blocker,
`location.path`, `location.lines.begin` required; fingerprints unique). reviewdog:
proto/rdf/reviewdog.proto and its JSON Schema (`DiagnosticResult`; severities by name; 1-based lines;
columns in UTF-8 bytes; `end` exclusive). JUnit: the `testsuites/testsuite/testcase/failure` layout
that GitLab and Jenkins read. The schemas below are written from those documents, not copied.
"""

from __future__ import annotations

import io
import json
import re
from xml.etree import ElementTree

import jsonschema
import pytest
from report_samples import CWD, all_results, span_of

from gradguard import report
from gradguard.model import (
    Applicability,
    Diagnostic,
    Edit,
    FileResult,
    Fix,
    Severity,
    Span,
)
from gradguard.report import json_format

pytestmark = pytest.mark.usefixtures("sample_catalogue")

LINES = {"type": "object", "required": ["begin"], "properties": {"begin": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1}}}
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "type": {"const": "issue"},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {"path": {"type": "string", "minLength": 1}, "lines": LINES},
            },
        },
    },
}
POSITION = {"type": "object", "required": ["line"], "properties": {"line": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}}}
RANGE = {"type": "object", "required": ["start"], "properties": {"start": POSITION, "end": POSITION}}
SEVERITY = {"enum": ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"]}
RDJSON_SCHEMA = {
    "type": "object",
    "required": ["diagnostics"],
    "properties": {
        "source": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "url": {"type": "string"}}},
        "severity": SEVERITY,
        "diagnostics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["message", "location"],
                "properties": {
                    "message": {"type": "string"},
                    "severity": SEVERITY,
                    "location": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "range": RANGE}},
                    "code": {"type": "object", "required": ["value"], "properties": {"value": {"type": "string"}, "url": {"type": "string"}}},
                    "suggestions": {
                        "type": "array",
                        "items": {"type": "object", "required": ["range", "text"], "properties": {"range": RANGE, "text": {"type": "string"}}},
                    },
                },
            },
        },
    },
}


def render(results: list[FileResult], fmt: str) -> str:
    out = io.StringIO()
    report.emit(results, fmt=fmt, out=out, color=False, cwd=CWD)
    return out.getvalue()


def test_gitlab_is_a_valid_code_quality_report_with_unique_fingerprints() -> None:
    issues = json.loads(render(all_results(), "gitlab"))
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert len(issues) == len(json_format.entries(all_results(), CWD))
    assert len({issue["fingerprint"] for issue in issues}) == len(issues)
    assert {issue["location"]["path"] for issue in issues} >= {"train.py", "notebooks/explore.ipynb"}
    assert json.loads(render([], "gitlab")) == []


def test_gitlab_fingerprints_survive_lines_moving() -> None:
    source = "import torch\nloss.backward()\nloss.backward()\n"
    finding = Diagnostic("GG001", "m", span_of(source, "loss.backward()", 2), Severity.ERROR)
    before = json.loads(render([FileResult("t.py", (finding,), source=source)], "gitlab"))
    moved = "\n\n" + source
    shifted = Diagnostic("GG001", "m", Span.of(5, 1, 5, 16), Severity.ERROR)
    after = json.loads(render([FileResult("t.py", (shifted,), source=moved)], "gitlab"))
    assert before[0]["fingerprint"] == after[0]["fingerprint"]
    assert (before[0]["location"]["lines"]["begin"], after[0]["location"]["lines"]["begin"]) == (3, 5)


def test_rdjson_is_a_valid_diagnostic_result() -> None:
    data = json.loads(render(all_results(), "rdjson"))
    jsonschema.validate(data, RDJSON_SCHEMA)
    assert data["source"]["name"] == "gradguard"
    codes = [d["code"]["value"] for d in data["diagnostics"]]
    assert codes == [entry["code"] for entry in json_format.entries(all_results(), CWD)]


def test_rdjson_counts_columns_in_utf8_bytes_and_offers_safe_fixes_only() -> None:
    source = "label = 'é日'; history.append(loss)\n"
    span = span_of(source, "history.append(loss)")
    fix = Fix("keep the number", Applicability.SAFE, (Edit(span_of(source, "loss)"), "loss.item())"),))
    safe = Diagnostic("GG010", "m", span, Severity.WARNING, fix=fix)
    unsafe = Diagnostic("GG010", "m", span, Severity.WARNING, fix=Fix("x", Applicability.UNSAFE, fix.edits))
    data = json.loads(render([FileResult("t.py", (safe,), source=source)], "rdjson"))
    (entry,) = data["diagnostics"]
    start = entry["location"]["range"]["start"]
    assert start == {"line": 1, "column": len("label = 'é日'; ".encode()) + 1}
    assert span.start.column == len("label = 'é日'; ") + 1  # characters, as the other formats count
    assert entry["suggestions"][0]["text"] == "loss.item())"
    assert entry["severity"] == "WARNING"
    plain = json.loads(render([FileResult("t.py", (unsafe,), source=source)], "rdjson"))
    assert "suggestions" not in plain["diagnostics"][0]


def test_junit_has_a_suite_per_file_a_failing_case_per_finding_and_a_skipped_case_per_note() -> None:
    text = render(all_results(), "junit")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ElementTree.fromstring(text.split("\n", 1)[1])
    assert root.tag == "testsuites"
    cases = root.findall("testsuite/testcase")
    entries = json_format.entries(all_results(), CWD)
    failing = [entry for entry in entries if entry["severity"] != "note"]
    assert len(cases) == len(entries) == int(root.get("tests", ""))
    assert len(failing) == int(root.get("failures", "")) < len(entries)
    for suite in root.findall("testsuite"):
        assert suite.get("name") and int(suite.get("tests", "")) == len(suite.findall("testcase"))
        assert int(suite.get("skipped", "")) == len(suite.findall("testcase/skipped"))
    for case in cases:
        name = case.get("name", "")
        assert case.get("classname") and re.fullmatch(r"gradguard\.(GG\d{3}|file-error|analysis-incomplete)", name)
        outcome = case.find("skipped" if name.endswith("analysis-incomplete") else "failure")
        assert outcome is not None and outcome.get("message")
    clean = ElementTree.fromstring(render([], "junit").split("\n", 1)[1])
    assert [s.get("tests") for s in clean.findall("testsuite")] == ["0"]


def test_pylint_lines_are_path_row_code_message() -> None:
    lines = render(all_results(), "pylint").splitlines()
    assert len(lines) == len(json_format.entries(all_results(), CWD))
    for line in lines:
        assert re.fullmatch(r"[^:]+:(cell \d+:)?\d+: \[(GG\d{3}|file-error|analysis-incomplete)\] .+", line), line
    assert "train.py:41: [GG001] `total` backward-s" in "\n".join(lines)
    assert "trainer.py:28: [analysis-incomplete] analysis incomplete in train(): step budget" in "\n".join(lines)


def test_json_lines_are_the_json_entries_one_per_line() -> None:
    lines = render(all_results(), "json-lines").splitlines()
    assert [json.loads(line) for line in lines] == json_format.entries(all_results(), CWD)
    assert render([], "json-lines") == ""
