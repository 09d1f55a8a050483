"""Edits that rules attach to findings, built from the libcst nodes the analysis points at.

Each helper returns `Edit`s in the coordinates of the analysed text. Whole nodes are regenerated with
libcst (`with_changes` + `code_for_node`), so the formatting and comments inside them survive; new
statements take the indentation and line ending of the code around them.
"""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.facts import FileFacts
from gradguard.model import Edit, Location, Span

_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def line_start(facts: FileFacts, statement: cst.CSTNode) -> Location:
    """The start of the line a statement begins on."""
    return Location(facts.span(statement).start.row, 1)


def insert_before(facts: FileFacts, statement: cst.CSTNode, lines: list[str]) -> Edit:
    """New statements on their own lines just before `statement`, at its indentation."""
    indent = facts.indent_of(statement)
    newline = facts.newline()
    text = "".join(f"{indent}{line}{newline}" for line in lines)
    at = line_start(facts, statement)
    return Edit(Span(at, at), text)


def insert_after(facts: FileFacts, statement: cst.CSTNode, lines: list[str]) -> Edit:
    """New statements on their own lines just after `statement`, at its indentation."""
    indent = facts.indent_of(statement)
    newline = facts.newline()
    text = "".join(f"{indent}{line}{newline}" for line in lines)
    at = Location(facts.span(statement).end.row + 1, 1)
    return Edit(Span(at, at), text)


def first_statement(body: cst.BaseSuite) -> cst.CSTNode | None:
    """The first statement of a block (None for a one-line suite)."""
    if isinstance(body, cst.IndentedBlock) and body.body:
        return body.body[0]
    return None


def remove_statement(facts: FileFacts, statement: cst.CSTNode) -> Edit:
    """Delete a statement's lines; a block left empty gets `pass`."""
    span = facts.span(statement)
    start = Location(span.start.row, 1)
    end = Location(span.end.row + 1, 1)
    parent = facts.parent(statement)
    if isinstance(parent, cst.IndentedBlock) and len(parent.body) == 1:
        return Edit(Span(start, end), f"{facts.indent_of(statement)}pass{facts.newline()}")
    return Edit(Span(start, end), "")


def replace_node(facts: FileFacts, node: cst.CSTNode, new: cst.CSTNode | str) -> Edit:
    """Replace a node by another node (or source text)."""
    text = new if isinstance(new, str) else facts.code(new)
    return Edit(facts.span(node), text)


def detached(facts: FileFacts, expr: cst.BaseExpression) -> str:
    """The source of `expr.detach()`, parenthesised when needed."""
    code = facts.code(expr)
    if not isinstance(expr, _ATOMIC):
        code = f"({code})"
    return f"{code}.detach()"


def set_keyword(facts: FileFacts, call: cst.Call, keyword: str, value: str) -> Edit:
    """`call(..., keyword=value)`: added, or replacing an existing value of that keyword."""
    args = list(call.args)
    new_value = cst.parse_expression(value)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            args[index] = arg.with_changes(value=new_value)
            return replace_node(facts, call, call.with_changes(args=args))
    new_arg = cst.Arg(value=new_value, keyword=cst.Name(keyword),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(new_arg)
    return replace_node(facts, call, call.with_changes(args=args))


def drop_keyword(facts: FileFacts, call: cst.Call, keyword: str) -> Edit:
    """`call(...)` without `keyword=...`."""
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == keyword)]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return replace_node(facts, call, call.with_changes(args=args))


def statement_text(facts: FileFacts, statement: cst.CSTNode) -> list[str]:
    """A statement's source lines with its own indentation removed (to re-insert elsewhere)."""
    bare = statement.with_changes(leading_lines=()) if hasattr(statement, "leading_lines") else statement
    lines = facts.code(bare).strip("\r\n").splitlines()
    indent = facts.indent_of(statement)
    return [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines]
