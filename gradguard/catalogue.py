"""The rule catalogue: one Markdown document per rule, read from the top-level `rules/` folder.

Each document starts with TOML front matter between `+++` lines (code, name, message, fix title,
severity, fix applicability, the torch error it explains), followed by the sections users read with
`gradguard rule CODE`. Its fenced examples (`python bad`, `python good`, `python fixed`) are run by the
tests; a bad example marks each line it expects a finding on with `# [CODE]`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gradguard.model import Applicability, Severity

DOCS_URL = "https://gradguard.dev/rules/{code}"

_FRONT_MATTER = re.compile(r"\A\+\+\+\n(?P<toml>.*?)\n\+\+\+\n", re.S)
_FENCE = re.compile(r"^```python (?P<kind>bad|good|fixed)\n(?P<code>.*?)^```\s*$", re.S | re.M)
MARKER = re.compile(r"[ \t]*# \[(?P<codes>GG\d{3}(?:\s*,\s*GG\d{3})*)\]")


@dataclass(frozen=True)
class Example:
    """One fenced example of a rule document, with its markers taken out."""

    kind: str  # "bad", "good" or "fixed"
    source: str
    expected: tuple[tuple[int, str], ...]  # (row, code) of each `# [CODE]` marker


@dataclass(frozen=True)
class RuleDoc:
    """A rule's document: its front matter, its Markdown body and its examples."""

    code: str
    name: str
    message: str
    fix_title: str
    severity: Severity
    fix_applicability: Applicability
    torch_error: str  # the runtime error the rule explains; "" for none (GG100)
    summary: str
    path: Path
    body: str
    examples: tuple[Example, ...]
    # The message when `retain_graph=True` on the very call keeps it from failing: the program runs,
    # backpropagating through the stale graph again each iteration (None: the rule has none).
    masked_message: str | None = None

    @property
    def url(self) -> str:
        """Where the rule's document is published."""
        return DOCS_URL.format(code=self.code)


class CatalogueError(Exception):
    """A rule document is malformed (a bug in gradguard itself, caught by the tests)."""


def catalogue_dir() -> Path:
    """The folder holding the rule documents: shipped in the wheel, or the checkout's `rules/`."""
    package = Path(__file__).resolve().parent
    shipped = package / "_catalogue"
    if shipped.is_dir():
        return shipped
    return package.parent / "rules"


def strip_markers(source: str) -> tuple[str, tuple[tuple[int, str], ...]]:
    """Remove `# [CODE]` markers from an example and return where they were."""
    lines = source.splitlines(keepends=True)
    expected: list[tuple[int, str]] = []
    out: list[str] = []
    for row, line in enumerate(lines, start=1):
        match = MARKER.search(line)
        if match:
            expected.extend((row, code.strip()) for code in match["codes"].split(","))
            ending = line[len(line.rstrip("\r\n")) :]
            line = line[: match.start()] + line[match.end() :].rstrip("\r\n") + ending
        out.append(line)
    return "".join(out), tuple(expected)


def parse_document(path: Path) -> RuleDoc:
    """Read one rule document."""
    text = path.read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(text)
    if not match:
        raise CatalogueError(f"{path}: no +++ front matter")
    try:
        meta = tomllib.loads(match["toml"])
        body = text[match.end() :]
        examples = []
        for fence in _FENCE.finditer(body):
            source, expected = strip_markers(fence["code"])
            examples.append(Example(fence["kind"], source, expected))
        return RuleDoc(
            code=meta["code"],
            name=meta["name"],
            message=meta["message"],
            fix_title=meta["fix_title"],
            severity=Severity(meta["severity"]),
            fix_applicability=Applicability(meta["fix_applicability"]),
            torch_error=meta["torch_error"],
            summary=meta["summary"],
            path=path,
            body=body,
            examples=tuple(examples),
            masked_message=meta.get("masked_message"),
        )
    except (KeyError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise CatalogueError(f"{path}: bad front matter: {exc}") from exc


@cache
def load() -> dict[str, RuleDoc]:
    """All rule documents, by code, in code order."""
    docs = [parse_document(p) for p in sorted(catalogue_dir().glob("GG*.md"))]
    return {doc.code: doc for doc in docs}


def get(code: str) -> RuleDoc:
    """One rule's document; KeyError for an unknown code."""
    return load()[code.upper()]
