"""The plain data every part of gradguard exchanges: locations, diagnostics, fixes, file results.

Everything here is frozen and free of behaviour beyond small conveniences, so results can cross
process boundaries (pickled by the parallel runner) and be cached as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    """How bad a finding is: an error fails at runtime, a warning wastes memory or hides a bug."""

    ERROR = "error"
    WARNING = "warning"


class Applicability(StrEnum):
    """Whether a fix may be applied without review (`--fix`) or only with `--unsafe-fixes`."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    """A position in a source text: 1-based row, 1-based column counted in characters."""

    row: int
    column: int


@dataclass(frozen=True)
class Span:
    """A half-open range of source text, `start` inclusive and `end` exclusive."""

    start: Location
    end: Location

    @classmethod
    def of(cls, row: int, column: int, end_row: int, end_column: int) -> Span:
        """Build a span from four integers (1-based rows and columns)."""
        return cls(Location(row, column), Location(end_row, end_column))


@dataclass(frozen=True)
class Edit:
    """Replace the text in `span` with `content` (an insertion when the span is empty).

    `path` names another file, a project module the finding's file imports, where the cause of the
    finding sits (the helper whose `torch.autograd.grad` frees the graph); None is the finding's file.
    """

    span: Span
    content: str
    path: str | None = None


@dataclass(frozen=True)
class Fix:
    """A set of edits that together repair one finding."""

    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    @property
    def other_files(self) -> tuple[str, ...]:
        """The other files its edits change (sorted), beside the finding's own."""
        return tuple(sorted({edit.path for edit in self.edits if edit.path is not None}))


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding: where the graph was freed, where the carrier was set."""

    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One finding of one rule at one place of one file.

    Rows and columns are those of the text the rule saw. For a notebook that is the program made of
    its code cells; the engine maps them back to a cell and a row inside it (`cell`, 1-based).
    """

    code: str
    message: str
    span: Span
    severity: Severity
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    cell: int | None = None
    # For notebooks, the spans of `related` and `fix` are mapped like `span`; `related_cells`
    # holds the cell of each related location, in the same order.
    related_cells: tuple[int | None, ...] = ()


@dataclass(frozen=True)
class FileError:
    """A problem with user input that stopped one file from being linted (never a crash)."""

    path: str
    message: str
    row: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Note:
    """A part of a file the analysis did not follow to the end: findings there may be missing.

    `row` is where that part starts (the function's `def`), None for the file as a whole; `cell` is the
    notebook cell, its `row` then counting within the cell."""

    message: str
    row: int | None = None
    cell: int | None = None


@dataclass(frozen=True)
class FileResult:
    """What linting one file produced."""

    path: str
    diagnostics: tuple[Diagnostic, ...] = ()
    errors: tuple[FileError, ...] = ()
    # The source as linted (None when it could not be read); the full reporter shows excerpts of it.
    source: str | None = None
    # True when the cheap prefilter skipped the file without parsing it.
    skipped: bool = False
    # Notebook code cells as (cell index 1-based, source) so reporters can show excerpts.
    cells: tuple[tuple[int, str], ...] = field(default=())
    # Other files whose content the analysis read (a project module imported by this one): the cache
    # serves this result only while each of them is unchanged.
    dependencies: tuple[str, ...] = ()
    # What the analysis did not follow to the end ("analysis incomplete in train(): step budget").
    incomplete: tuple[Note, ...] = ()
