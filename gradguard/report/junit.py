"""`--output-format junit`: JUnit XML, which CI systems (GitLab, Jenkins, Azure) show as test results.

One `<testsuite>` per file with findings, one `<testcase>` per finding, each with a `<failure>`
(ruff's layout: `classname` is the path, `name` is `gradguard.CODE`). A clean run is one empty suite,
so a CI step that expects the file always finds one. A part of a file the analysis did not follow to
the end is a `<testcase>` marked `<skipped>` (`gradguard.analysis-incomplete`): not checked, not failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO
from xml.etree import ElementTree

from gradguard.model import FileResult
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    display_path,
    position,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)


def _case(suite: ElementTree.Element, path: str, code: str, row: int, column: int, where: str, message: str) -> None:
    case = ElementTree.SubElement(
        suite, "testcase", name=f"gradguard.{code}", classname=path, line=str(row), column=str(column)
    )
    failure = ElementTree.SubElement(case, "failure", message=message, type=code)
    failure.text = f"{where}: {message}"


def document(results: Sequence[FileResult], cwd: Path) -> ElementTree.Element:
    """The `<testsuites>` element of a run."""
    root = ElementTree.Element("testsuites", name="gradguard")
    total = failed = 0
    for result in sorted_results(results, cwd):
        if not result.errors and not result.diagnostics and not result.incomplete:
            continue
        path = display_path(result.path, cwd)
        suite = ElementTree.SubElement(root, "testsuite", name=path)
        count = 0
        for error in sorted_errors(result.errors):
            row, column = error.row or 1, error.column or 1
            _case(suite, path, FILE_ERROR_CODE, row, column, f"line {row}, col {column}", error.message)
            count += 1
        for diagnostic in sorted_diagnostics(result.diagnostics):
            start = diagnostic.span.start
            where = position(start.row, start.column, diagnostic.cell)
            _case(suite, path, diagnostic.code, start.row, start.column, where, diagnostic.message)
            count += 1
        failures = count
        for note in sorted_notes(result.incomplete):
            row = note.row or 1
            case = ElementTree.SubElement(
                suite, "testcase", name=f"gradguard.{NOTE_CODE}", classname=path, line=str(row), column="1"
            )
            ElementTree.SubElement(case, "skipped", message=note.message)
            count += 1
        suite.set("tests", str(count))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", str(count - failures))
        total += count
        failed += failures
    if total == 0:
        ElementTree.SubElement(root, "testsuite", name="gradguard", tests="0", failures="0", errors="0")
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    root.set("skipped", str(total - failed))
    return root


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write the XML document, with its declaration and a final newline."""
    root = document(results, cwd)
    ElementTree.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ElementTree.tostring(root, encoding="unicode"))
    out.write("\n")
