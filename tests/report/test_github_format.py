"""GitHub Actions workflow commands: the annotation lands on the right line and survives any text."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_samples import CWD, all_results, notebook_result, training_result

from gradguard import report
from gradguard.report.github import escape_data, escape_property

pytestmark = pytest.mark.usefixtures("sample_catalogue")

# What the Actions runner does with `::level key=value,key=value::message` (actions/runner's
# ActionCommand parser): split properties on `,`, key and value on the first `=`, then unescape.
COMMAND = re.compile(r"^::(?P<level>error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return unescape_data(text.replace("%3A", ":").replace("%2C", ","))


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, line
    props = dict(item.split("=", 1) for item in match["props"].split(","))
    return match["level"], {key: unescape_property(value) for key, value in props.items()}, unescape_data(
        match["message"]
    )


def commands(results: list) -> list[str]:
    out = io.StringIO()
    report.emit(results, fmt="github", out=out, color=False, cwd=CWD)
    return out.getvalue().splitlines()


def test_a_finding_is_annotated_on_its_line() -> None:
    level, props, message = parse(commands([training_result()])[0])
    assert level == "error"
    assert props == {
        "file": "train.py",
        "line": "41",
        "col": "13",
        "endLine": "41",
        "endColumn": "29",
        "title": "gradguard (GG001)",
    }
    assert message.splitlines() == [
        "`total` backward-s through the graph of `loss`, already freed by `loss.backward()`",
        "  38:13: graph freed here",
        "  37:13: `loss` assigned here",
        "  help: Backward once, through `total` (which includes `loss`) (unsafe fix)",
    ]


def test_the_exact_command_text() -> None:
    assert commands([training_result()])[0].startswith(
        "::error file=train.py,line=41,col=13,endLine=41,endColumn=29,title=gradguard (GG001)::"
        "`total` backward-s through the graph of `loss`, already freed by `loss.backward()`%0A  38:13: "
    )


def test_warnings_are_warning_commands() -> None:
    level, props, _ = parse(commands([training_result()])[1])
    assert (level, props["title"]) == ("warning", "gradguard (GG010)")


def test_a_notebook_finding_is_annotated_on_the_file_with_its_cell_in_the_message() -> None:
    _, props, message = parse(commands([notebook_result()])[0])
    assert props == {"file": "notebooks/explore.ipynb", "title": "gradguard (GG003)"}
    assert message.startswith("cell 5:6:5: `hidden` carries")
    assert "\n  cell 3:2:1: `hidden` first assigned here" in message


def test_file_errors_are_error_commands() -> None:
    lines = commands(all_results())
    assert lines[0] == (
        "::error file=broken.py,line=3,col=9,title=gradguard (file-error)::syntax error: '(' was never closed"
    )
    assert lines[1] == "::error file=data/missing.py,title=gradguard (file-error)::no such file or directory"


def test_separators_in_paths_and_messages_are_escaped() -> None:
    result = training_result()
    double = next(d for d in result.diagnostics if d.code == "GG001")
    diagnostic = replace(double, message="100% sure:\r\nline two, really", related=(), fix=None)
    line = commands([replace(result, path="runs,v2/a:b.py", diagnostics=(diagnostic,))])[0]
    assert line.startswith("::error file=runs%2Cv2/a%3Ab.py,line=41,")
    assert line.endswith("::100%25 sure:%0D%0Aline two, really")
    _, props, message = parse(line)
    assert props["file"] == "runs,v2/a:b.py"
    assert message == "100% sure:\r\nline two, really"


@given(st.text())
def test_escaping_round_trips(text: str) -> None:
    assert unescape_data(escape_data(text)) == text
    assert unescape_property(escape_property(text)) == text
    assert not set("\r\n") & set(escape_data(text))
    assert not set("\r\n,:") & set(escape_property(text))
