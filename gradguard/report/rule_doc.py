"""`gradguard rule CODE` and `gradguard rule --all`: the catalogue, rendered with rich."""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.console import Console
from rich.markdown import Markdown
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradguard.catalogue import RuleDoc
from gradguard.model import Applicability, Severity
from gradguard.report._common import display_body

_SEVERITY_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow"}


def fix_label(applicability: Applicability) -> str:
    """How a rule's fix is applied, in the words of the command line."""
    if applicability is Applicability.SAFE:
        return "safe: `gradguard lint --fix` applies it"
    return "unsafe: applied only with `gradguard lint --fix --unsafe-fixes`, review it"


def render_rule(doc: RuleDoc, console: Console) -> None:
    """Print one rule: a summary of its front matter, then its Markdown document."""
    title = Text(doc.code, style="bold")
    title.append(f" {doc.name}", style="bold cyan")
    console.print(title)
    console.print(Text(doc.summary))
    console.print()
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    facts.add_row("Severity", Text(doc.severity.value, style=_SEVERITY_STYLES[doc.severity]))
    facts.add_row("Fix", Text(fix_label(doc.fix_applicability)))
    if doc.torch_error:
        facts.add_row("Explains", Text(doc.torch_error))
    facts.add_row("Document", Text(doc.url))
    console.print(facts)
    console.print()
    console.print(Markdown(display_body(doc)))


# Below this width a table leaves the summary too little room: each rule takes two lines instead.
_TABLE_MIN_WIDTH = 90


def render_catalogue(docs: Iterable[RuleDoc], console: Console) -> None:
    """Print the rules: code, name, severity, fix applicability and summary.

    Codes and names are never broken; a summary wraps at word boundaries. In a console narrower than
    `_TABLE_MIN_WIDTH` each rule is a line of code and name, then its severity, fix and summary indented.
    """
    docs = list(docs)
    if console.width < _TABLE_MIN_WIDTH:
        for doc in docs:
            line = Text()
            line.append(doc.code, style="bold")
            line.append(f"  {doc.name}", style="cyan")
            console.print(line, overflow="fold")
            about = Text()
            about.append(doc.severity.value, style=_SEVERITY_STYLES[doc.severity])
            about.append(f", {doc.fix_applicability.value} fix. {doc.summary}")
            console.print(Padding(about, (0, 0, 0, 7)))
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("Code", style="bold", no_wrap=True, min_width=5)
    table.add_column("Name", style="cyan", no_wrap=True)
    table.add_column("Severity", no_wrap=True)
    table.add_column("Fix", no_wrap=True)
    table.add_column("Summary", overflow="fold")
    for doc in docs:
        table.add_row(
            doc.code,
            doc.name,
            Text(doc.severity.value, style=_SEVERITY_STYLES[doc.severity]),
            doc.fix_applicability.value,
            doc.summary,
        )
    console.print(table)


def rule_json(doc: RuleDoc) -> dict[str, str]:
    """One rule as `gradguard rule --output-format json` prints it (ruff's keys where it has them)."""
    return {
        "code": doc.code,
        "name": doc.name,
        "summary": doc.summary,
        "message": doc.message,
        "fix": doc.fix_title,
        "fix_applicability": doc.fix_applicability.value,
        "severity": doc.severity.value,
        "torch_error": doc.torch_error,
        "url": doc.url,
        "explanation": display_body(doc),
    }
