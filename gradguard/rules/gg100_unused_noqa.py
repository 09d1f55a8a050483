"""GG100: a `# noqa: GG...` directive that silences no finding."""

from __future__ import annotations

from collections.abc import Iterator

from gradguard.analysis.facts import FileFacts
from gradguard.model import Applicability, Diagnostic, Edit, Fix, Span
from gradguard.noqa import Directive, directives
from gradguard.rules import Rule, all_rules


class UnusedNoqa(Rule):
    """A `# noqa` for gradguard codes on a line where no rule reports them."""

    code = "GG100"

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        if not directives(facts.source):
            return
        # What every other rule reports, before any `# noqa` is applied (the engine applies them).
        reported = {
            (diagnostic.span.start.row, diagnostic.code)
            for rule in all_rules()
            if rule.code != self.code
            for diagnostic in rule.check(facts)
        }
        yield from self._unused(facts.source, facts.lines, reported)

    def check_unanalysed(self, source: str) -> Iterator[Diagnostic]:
        """In a file that runs no backward no rule reports anything: every directive for a GG code is unused."""
        yield from self._unused(source, source.splitlines(), set())

    def _unused(self, source: str, lines: list[str], reported: set[tuple[int, str]]) -> Iterator[Diagnostic]:
        for directive in directives(source):
            ours = [code for code in directive.codes if code.startswith("GG") and code != self.code]
            unused = [code for code in ours if (directive.row, code) not in reported]
            if not unused:
                continue
            kept = [code for code in directive.codes if code not in unused]
            doc = self.doc
            listed = ", ".join(f"`{code}`" for code in unused)
            title = doc.fix_title if not kept else f"Remove {listed} from the directive"
            yield Diagnostic(
                code=self.code,
                message=doc.message.format(codes=listed),
                span=Span.of(directive.row, directive.start, directive.row, directive.end),
                severity=doc.severity,
                fix=Fix(title, Applicability.SAFE, (_edit(lines, directive, kept),)),
            )


def _edit(lines: list[str], directive: Directive, kept: list[str]) -> Edit:
    """Rewrite the directive with the codes kept, or remove it (and its comment when nothing else is in it)."""
    row = directive.row
    line = lines[row - 1]
    if kept:
        return Edit(Span.of(row, directive.start, row, directive.end), f"# noqa: {', '.join(kept)}")
    rest = line[directive.end - 1 :]
    if not rest.strip():
        # Nothing follows the directive: take it out with the blanks before it.
        start = len(line[: directive.start - 1].rstrip()) + 1
        if directive.start == directive.comment_start and start == 1:
            start = directive.start  # a comment line of its own keeps its indentation
        return Edit(Span.of(row, start, row, len(line) + 1), "")
    if directive.start == directive.comment_start:
        # `# noqa: GG001 why` keeps its explanation as a plain comment.
        return Edit(Span.of(row, directive.start, row, directive.end + len(rest) - len(rest.lstrip())), "# ")
    return Edit(Span.of(row, directive.start, row, directive.end + len(rest) - len(rest.lstrip())), "")
