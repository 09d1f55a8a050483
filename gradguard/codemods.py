"""Edits that rules attach to findings, built from the libcst nodes the analysis points at.

Each helper returns `Edit`s in the coordinates of the analysed text. Whole nodes are regenerated with
libcst (`with_changes` + `code_for_node`), so the formatting and comments inside them survive; new
statements take the indentation and line ending of the code around them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import libcst as cst

from gradguard.analysis.facts import FileFacts
from gradguard.model import Edit, Location, Span
from gradguard.parse import nodes_of

_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def last_reading_after(facts: FileFacts, statement: cst.CSTNode, name: str) -> cst.CSTNode:
    """The last statement of `statement`'s block, from it on, that reads `name` (`statement` itself
    when none does): where a reset of `name` goes so that the block's own later reads
    (`last = total.item()`) still see the old value."""
    facts = facts.home(statement)
    block = facts.parent(statement)
    body = list(getattr(block, "body", ()))
    if statement not in body:
        return statement
    last = statement
    for later in body[body.index(statement) + 1:]:
        if reads_name(later, name):
            last = later
    return last


class NotALine(KeyError):
    """An edit of whole lines asked for a statement that shares its line with the `if`, `for` or `with`
    it belongs to (`if done: break`): no line holds it alone. Caught where fixes are built, as a node
    of no known file is: the finding is then reported without that fix."""


def _whole_line(statement: cst.CSTNode) -> None:
    if isinstance(statement, cst.BaseSmallStatement):
        raise NotALine(statement)


def line_start(facts: FileFacts, statement: cst.CSTNode) -> Location:
    """The start of the line a statement begins on."""
    facts = facts.home(statement)
    return Location(facts.span(statement).start.row, 1)


def insert_before(facts: FileFacts, statement: cst.CSTNode, lines: list[str]) -> Edit:
    """New statements on their own lines just before `statement`, at its indentation."""
    _whole_line(statement)
    facts = facts.home(statement)
    indent = facts.indent_of(statement)
    newline = facts.newline()
    text = "".join(f"{indent}{line}{newline}" for line in lines)
    at = line_start(facts, statement)
    return Edit(Span(at, at), text, facts.path)


def insert_after(facts: FileFacts, statement: cst.CSTNode, lines: list[str]) -> Edit:
    """New statements on their own lines just after `statement`, at its indentation."""
    _whole_line(statement)
    facts = facts.home(statement)
    indent = facts.indent_of(statement)
    newline = facts.newline()
    text = "".join(f"{indent}{line}{newline}" for line in lines)
    at = Location(facts.span(statement).end.row + 1, 1)
    return Edit(Span(at, at), text, facts.path)


def spelled(facts: FileFacts, qualified: str) -> str | None:
    """How a module's own top-level imports name `qualified` (`torch.no_grad`, `th.no_grad`,
    `no_grad`), the shortest way; None when no import reaches it."""
    from gradguard.analysis.program import module_imports

    found = []
    for local, bound in module_imports(facts.module).items():
        if bound == qualified:
            found.append(local)
        elif qualified.startswith(bound + "."):
            found.append(local + qualified[len(bound):])
    return min(found, key=len, default=None)


def under_context(facts: FileFacts, statement: cst.CSTNode, qualified: str) -> Edit | None:
    """The statement's lines indented one level under `with <qualified>():`, in whichever module holds
    it, named as that module's imports name it; None when none reaches it, or the statement spans a
    multi-line string (indenting would change the string)."""
    _whole_line(statement)
    facts = facts.home(statement)
    context = spelled(facts, qualified)
    span = facts.span(statement)
    lines = facts.lines[span.start.row - 1:span.end.row]
    if context is None or any(quotes in line for line in lines for quotes in ('"""', "'''")):
        return None
    indent, unit, newline = facts.indent_of(statement), facts.module.default_indent, facts.newline()
    text = f"{indent}with {context}():{newline}" + "".join(
        f"{unit}{line}{newline}" if line.strip() else newline for line in lines)
    return Edit(Span(Location(span.start.row, 1), Location(span.end.row + 1, 1)), text, facts.path)


def first_statement(body: cst.BaseSuite) -> cst.CSTNode | None:
    """The first statement of a block (None for a one-line suite)."""
    if isinstance(body, cst.IndentedBlock) and body.body:
        return body.body[0]
    return None


def remove_statement(facts: FileFacts, statement: cst.CSTNode, comments: bool = False) -> Edit:
    """Delete a statement's lines (and the comment lines just above it, when `comments`);
    a block left empty gets `pass`."""
    _whole_line(statement)
    facts = facts.home(statement)
    span = facts.span(statement)
    above = sum(1 for line in getattr(statement, "leading_lines", ()) if line.comment is not None) \
        if comments else 0
    start = Location(span.start.row - _comment_rows(facts, span.start.row, above), 1)
    end = Location(span.end.row + 1, 1)
    parent = facts.parent(statement)
    if isinstance(parent, cst.IndentedBlock) and len(parent.body) == 1:
        return Edit(Span(start, end), f"{facts.indent_of(statement)}pass{facts.newline()}", facts.path)
    return Edit(Span(start, end), "", facts.path)


def _comment_rows(facts: FileFacts, row: int, wanted: int) -> int:
    """How many of the `wanted` lines just above `row` are comment lines."""
    count = 0
    while count < wanted and row - count - 2 >= 0 and facts.lines[row - count - 2].lstrip().startswith("#"):
        count += 1
    return count


def replace_node(facts: FileFacts, node: cst.CSTNode, new: cst.CSTNode | str) -> Edit:
    """Replace a node by another node (or source text)."""
    facts = facts.home(node)
    text = new if isinstance(new, str) else facts.code(new)
    return Edit(facts.span(node), text, facts.path)


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


def statement_text(facts: FileFacts, statement: cst.CSTNode, comments: bool = False) -> list[str]:
    """A statement's source lines with its own indentation removed (to re-insert elsewhere),
    with the comment lines just above it when `comments` (a statement that moves takes them)."""
    leading = getattr(statement, "leading_lines", ())
    kept = [line for line in leading if line.comment is not None] if comments else []
    bare = statement.with_changes(leading_lines=kept) if hasattr(statement, "leading_lines") else statement
    # libcst writes a node without its own indentation: nested lines are already relative to it.
    return facts.code(bare).strip("\r\n").splitlines()


def assigned_names(statement: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            targets = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
            for target in targets:
                names.update(_names_in(target))
    return names


def _names_in(node: cst.CSTNode) -> set[str]:
    """Every plain name mentioned in `node` (`self.x` counts as `self.x` too)."""
    found: set[str] = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            from gradguard.analysis.names import dotted

            text = dotted(attribute)
            if text is not None:
                found.add(text)

    node.visit(Collector())
    return found


def names_read(statement: cst.CSTNode) -> set[str]:
    """The names (and attribute chains) a statement reads."""
    return _names_in(statement)


def reads_name(statement: cst.CSTNode, name: str) -> bool:
    """Whether a statement mentions `name` outside what it assigns."""
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            value = getattr(small, "value", None)
            if isinstance(value, cst.CSTNode) and name in _names_in(value):
                return True
            if isinstance(small, cst.Expr) and name in _names_in(small):
                return True
        return False
    return name in _names_in(statement)


def mentions(node: cst.CSTNode, text: str) -> bool:
    """Whether `node` reads the name or attribute chain `text` (`model`, `self.model`)."""
    if "." not in text:
        return reads_name(node, text)
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            nonlocal found
            if _dotted(attribute) == text:
                found = True
                return False
            return True

    node.visit(Finder())
    return found


def first_reading(facts: FileFacts, statement: cst.CSTNode, name: str) -> cst.CSTNode:
    """The first statement of `statement`'s block, up to it, that reads `name` (else `statement`)."""
    facts = facts.home(statement)
    for earlier in getattr(facts.parent(statement), "body", ()):
        if earlier is statement:
            break
        if reads_name(earlier, name):
            return earlier
    return statement


def definition_chain(facts: FileFacts, statement: cst.CSTNode) -> list[cst.CSTNode]:
    """A simple assignment with the assignments of the same block just before it whose names it
    needs (`logits = model(x)` before `loss = criterion(logits, y)`): what computing it again takes."""
    block = facts.parent(statement)
    if not isinstance(block, cst.IndentedBlock) and not isinstance(block, cst.Module):
        return [statement]
    body = list(block.body)
    if statement not in body:
        return [statement]
    chain = [statement]
    needed = _names_in(statement) - assigned_names(statement)
    for earlier in reversed(body[: body.index(statement)]):
        if not isinstance(earlier, cst.SimpleStatementLine):
            break
        assigned = assigned_names(earlier)
        if not assigned or not assigned & needed:
            continue
        if not all(isinstance(s, (cst.Assign, cst.AnnAssign)) for s in earlier.body):
            break
        if earlier in facts.draws or earlier in facts.makes_objects:
            # The model, its optimizer, the data drawn: what the computation runs on, kept as it is
            # (made again, the model would start over and the data would change).
            continue
        chain.insert(0, earlier)
        needed |= _names_in(earlier) - assigned
    return chain


def used_between(facts: FileFacts, first: cst.CSTNode, last: cst.CSTNode, name: str) -> bool:
    """Whether a statement of the block between `first` and `last` mentions `name`."""
    block = facts.parent(first)
    if block is None or facts.parent(last) is not block:
        return True
    body = list(block.body)  # type: ignore[attr-defined]
    start, end = body.index(first), body.index(last)
    return any(reads_name(s, name) for s in body[start + 1 : end])


def mentioned_outside(node: cst.CSTNode, inner: cst.CSTNode, name: str) -> bool:
    """Whether `node` mentions `name` anywhere but inside `inner` (a loop nested in it)."""
    found = False

    class Finder(cst.CSTVisitor):
        def on_visit(self, current: cst.CSTNode) -> bool:
            nonlocal found
            if current is inner or found:
                return False
            if isinstance(current, (cst.Name, cst.Attribute)) and _dotted(current) == name:
                found = True
                return False
            return True

    node.visit(Finder())
    return found


def read_in_rows(facts: FileFacts, names: list[str], start: int, end: int,
                 reports: Callable[[cst.Call], bool], cuts: Callable[[cst.Call], bool] | None = None) -> bool:
    """Whether code on rows `start+1 .. end` reads one of `names`, other than in a statement that
    only reports it (a bare call for which `reports` holds: `print(g)`, `self.log("g", g)`) or inside a
    call for which `cuts` holds (what it returns has no graph: `g.norm().item()`)."""
    wanted = set(names)

    class Reads(cst.CSTVisitor):
        found = False

        def visit_Expr(self, node: cst.Expr) -> bool:
            return not (isinstance(node.value, cst.Call) and reports(node.value))

        def visit_Call(self, node: cst.Call) -> bool:
            return cuts is None or not cuts(node)

        def visit_Name(self, node: cst.Name) -> None:
            if node.value in wanted and start < facts.span(node).start.row <= end:
                self.found = True

    reads = Reads()
    facts.module.visit(reads)
    return reads.found


def target_names(statement: cst.CSTNode | None) -> list[str]:
    """The plain names an assignment statement binds (`a, b = ...` gives both)."""
    names: list[str] = []
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names.extend(_plain_names(target.target))
    return names


def target_texts(statement: cst.CSTNode | None) -> list[str]:
    """The names and attribute chains an assignment statement binds as a whole (`names.targets_of`)."""
    from gradguard.analysis.names import targets_of

    return targets_of(statement)


def _plain_names(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for e in node.elements for n in _plain_names(e.value)]
    return []


def _dotted(node: cst.CSTNode) -> str | None:
    from gradguard.analysis.names import dotted

    return dotted(node) if isinstance(node, cst.BaseExpression) else None


@lru_cache(maxsize=8)
def distribution_names(module: cst.Module) -> tuple[frozenset[str], frozenset[str]]:
    """The names a module gives torch.distributions classes (`Categorical`) and the module itself
    (`D` in `import torch.distributions as D`), from its imports (once per module: nodes hash by
    identity)."""
    from gradguard.analysis.api.distributions import PREFIX
    from gradguard.parse import every_node

    package = PREFIX.rstrip(".")
    parent, leaf = package.rsplit(".", 1)
    classes: set[str] = set()
    modules: set[str] = {package}
    for node in every_node(module):
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = _dotted(alias.name) or ""
                if name.startswith(package) and alias.asname is not None:
                    modules.add(_dotted(alias.asname.name) or name)  # type: ignore[arg-type]
        elif isinstance(node, cst.ImportFrom):
            source = _dotted(node.module) if node.module is not None else ""
            if isinstance(node.names, cst.ImportStar) or not source:
                continue
            for alias in node.names:
                local = _dotted(alias.asname.name) if alias.asname is not None else _dotted(alias.name)  # type: ignore[arg-type]
                if local is None:
                    continue
                if source.startswith(package):
                    classes.add(local)
                elif source == parent and _dotted(alias.name) == leaf:
                    modules.add(local)
    return frozenset(classes), frozenset(modules)


def _is_distribution(call: cst.BaseExpression, module: cst.Module) -> bool:
    if not isinstance(call, cst.Call):
        return False
    name = _dotted(call.func) or ""
    classes, modules = distribution_names(module)
    owner = name.rsplit(".", 1)[0] if "." in name else ""
    return name in classes or owner in modules


def _value_shape(value: cst.BaseExpression, module: cst.Module) -> str | None:
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    if isinstance(value, (cst.Float, cst.Integer)):
        return "number"
    if isinstance(value, cst.Call) and _dotted(value.func) in ("float", "int"):
        return "number"
    if isinstance(value, cst.Dict) or (isinstance(value, cst.Call) and _dotted(value.func) == "dict"):
        return "dict"
    if _is_distribution(value, module):
        return "distribution"
    return None


def assignments_of(facts: FileFacts, name: str, near: cst.CSTNode | None) -> list[cst.BaseExpression]:
    """The values assigned to `name` (plainly, `name = value`): in the function around `near` for a
    plain name, anywhere in the module for an attribute (`self.h` may be set in `__init__`)."""
    return list(_assignments_in(_scope_of(facts, name, near)).get(name, ()))


@lru_cache(maxsize=64)
def _assignments_in(scope: cst.CSTNode) -> dict[str, tuple[cst.BaseExpression, ...]]:
    """Every plain assignment in a scope, by the dotted name assigned (one walk per scope)."""
    values: dict[str, list[cst.BaseExpression]] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                name = _dotted(target.target)
                if name is not None:
                    values.setdefault(name, []).append(node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            name = _dotted(node.target)
            if node.value is not None and name is not None:
                values.setdefault(name, []).append(node.value)

    scope.visit(Finder())
    return {name: tuple(found) for name, found in values.items()}


def assigned_shape(facts: FileFacts, name: str, conflict: object) -> str | None:
    """What the syntax of `name`'s assignments says it holds: "number" (a float or int literal, as an
    accumulator starts), "dict", "distribution", or None when the syntax does not tell."""
    near = getattr(getattr(conflict, "failing", None), "statement", None)
    values = assignments_of(facts, name, near)
    shapes = [_value_shape(v, facts.module) for v in values]
    if "distribution" in shapes or "dict" in shapes:
        return "distribution" if "distribution" in shapes else "dict"
    # A number only while every assignment keeps it one (`total = 0.0`, `total = total + x`).
    if "number" in shapes and all(shape == "number" or _self_update(v, name) for v, shape in zip(values, shapes)):
        return "number"
    return None


def accumulated_in(node: cst.CSTNode, name: str) -> bool:
    """Whether code adds to what a variable or attribute holds (`name += x`)."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_AugAssign(self, small: cst.AugAssign) -> None:
            nonlocal found
            found = found or (isinstance(small.operator, cst.AddAssign) and _dotted(small.target) == name)

    node.visit(Finder())
    return found


def _self_update(value: cst.BaseExpression, name: str) -> bool:
    return isinstance(value, cst.BinaryOperation) and _dotted(value.left) == name


def detached_as(facts: FileFacts, expr: cst.BaseExpression, shape: str, items: str = "tensor",
                near: cst.CSTNode | None = None) -> str | None:
    """`expr` detached as what it holds (`causes.detach_code`, the text the monitor words too): a
    tensor, each element of a tuple, list or dict, a number left as it is when it may still be one;
    None for what cannot be detached (a distribution). Placed `near` a statement, its comprehension
    names none of the names the function around it uses (`t` of `while t < steps`)."""
    from gradguard.causes import detach_code

    if shape == "tensor":
        return detached(facts, expr)
    avoid = frozenset(_names_in(_scope_of(facts, "", near))) if near is not None else frozenset()
    return detach_code(facts.code(expr), shape, items, avoid)


def item_shape(facts: FileFacts, name: str, near: cst.CSTNode | None) -> str | None:
    """What every item of a container holds, from the displays assigned to it (`[(h0, c0) for _ in
    range(n)]`, `{"h": torch.zeros(2, 4)}`): "tensor", "tuple" (of tensors), or None when the syntax
    does not show it for all of them."""
    shapes: set[str | None] = set()
    keys: set[str] = set()
    for value in assignments_of(facts, name, near):
        if isinstance(value, cst.Dict):
            keys.update(e.key.evaluated_value for e in value.elements  # type: ignore[union-attr]
                        if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString))
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            shapes.add(_element_shape(value.elt))
        elif isinstance(value, cst.DictComp):
            shapes.add(_element_shape(value.value))
        elif isinstance(value, (cst.List, cst.Tuple)) and value.elements:
            shapes.update(_element_shape(e.value) for e in value.elements)
        elif isinstance(value, cst.Dict) and value.elements:
            shapes.update(_element_shape(e.value) if isinstance(e, cst.DictElement) else None for e in value.elements)
        else:
            return None
    for entry in entries_rebound_in(_scope_of(facts, name, near), name):
        # An entry stored under another key than the display's may hold anything (`state["n"] = 0`).
        index = entry.slice[0].slice if len(entry.slice) == 1 else None
        key = index.value if isinstance(index, cst.Index) else None
        if keys and not (isinstance(key, cst.SimpleString) and key.evaluated_value in keys):
            return None
    return shapes.pop() if len(shapes) == 1 else None


def _element_shape(value: cst.BaseExpression) -> str | None:
    if isinstance(value, cst.Tuple) and value.elements:
        return "tuple" if all(_element_shape(e.value) == "tensor" for e in value.elements) else None
    return "tensor" if _makes_tensor(value) else None


def _makes_tensor(value: cst.BaseExpression) -> bool:
    """A call of a torch function that hands back a new tensor (`torch.zeros(2, 4)`)."""
    from gradguard.analysis.api import Returns, lookup

    if not isinstance(value, cst.Call):
        return False
    name = _dotted(value.func)
    fact = lookup(name) if name is not None else None
    return fact is not None and fact.receiver is None and fact.returns in (Returns.FRESH, Returns.DERIVED)


def holder_expression(text: str) -> cst.BaseExpression | None:
    """A holder's text (`hidden`, `self.h`) as an expression node, None when it is not one."""
    try:
        return cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return None


def tensor_method_calls(facts: FileFacts, name: str, near: cst.CSTNode | None,
                        methods: tuple[str, ...]) -> list[tuple[cst.Call, cst.BaseExpression]]:
    """The argument-less calls of tensor methods on `name` (`total.item()`, `total.detach().item()`),
    each with the receiver they end at, in the scope `assignments_of` searches."""
    found: list[tuple[cst.Call, cst.BaseExpression]] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in methods and not node.args:
                receiver = func.value
                while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                        and receiver.func.attr.value in methods and not receiver.args:
                    receiver = receiver.func.value
                if _dotted(receiver) == name:
                    found.append((node, receiver))
                    return False
            return True

    _scope_of(facts, name, near).visit(Finder())
    return found


def _scope_of(facts: FileFacts, name: str, near: cst.CSTNode | None) -> cst.CSTNode:
    """Where a holder's uses are looked for: the function around `near` for a plain name, else the
    whole module."""
    if "." not in name and near is not None:
        current = facts.parent(near)
        while current is not None and not isinstance(current, cst.FunctionDef):
            current = facts.parent(current)
        return current or facts.module
    return facts.module


def read_names(statement: cst.CSTNode) -> set[str]:
    """The plain names a statement reads (its assigned value, or the whole statement)."""
    found: set[str] = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            value = getattr(small, "value", None)
            (value if isinstance(value, cst.CSTNode) else small).visit(Collector())
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                for target in targets:  # `self.w = ...` reads `self` too
                    if isinstance(target, (cst.Attribute, cst.Subscript)):
                        target.value.visit(Collector())
    else:
        statement.visit(Collector())
    return found


def rebound_in(loop: cst.CSTNode, names: set[str]) -> bool:
    """Whether the loop (its target or its body) assigns any of `names`."""
    return bool(bound_names(loop) & names)


def bound_names(loop: cst.CSTNode) -> set[str]:
    """The plain names a loop (its target or its body) binds."""
    bound: set[str] = set()

    class Binder(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            pass

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            bound.update(_plain_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            bound.update(_plain_names(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            bound.update(_plain_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            bound.update(_plain_names(node.target))

        def visit_AsName(self, node: cst.AsName) -> None:
            if isinstance(node.name, cst.BaseExpression):
                bound.update(_plain_names(node.name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            bound.update(_plain_names(node.target))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            bound.add(node.name.value)
            return False

    loop.visit(Binder())
    return bound


def entries_rebound_in(node: cst.CSTNode, holder: str) -> list[cst.Subscript]:
    """The entries of a container that code assigns (`holder[k] = ...`, `out, holder[k] = ...`,
    `holder[k] += ...`)."""
    found: list[cst.Subscript] = []

    def collect(target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript) and _dotted(target.value) == holder:
            found.append(target)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                collect(element.value)

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            collect(target.target)

        def visit_AugAssign(self, small: cst.AugAssign) -> None:
            collect(small.target)

    node.visit(Finder())
    return found


def calls_in(expression: cst.CSTNode) -> bool:
    """Whether an expression calls anything (evaluating it again may give another value)."""
    return next(nodes_of(expression, cst.Call), None) is not None


def enclosing_function(facts: FileFacts, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The innermost function definition around a node."""
    current = facts.parent(node)
    while current is not None and not isinstance(current, cst.FunctionDef):
        current = facts.parent(current)
    return current


def may_be_none_at(facts: FileFacts, statement: cst.CSTNode, name: str) -> bool:
    """Whether the code says `name` may be None where `statement` reads it: a parameter of the
    enclosing function defaulting to None (`def forward(self, x, state=None)`) not bound before in
    its body, or a test of it against None in the statement itself (`state if state is not None
    else ...`)."""
    for comparison in nodes_of(statement, cst.Comparison):
        operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
        if any(isinstance(o, cst.Name) and o.value == name for o in operands) and any(
                isinstance(o, cst.Name) and o.value == "None" for o in operands):
            return True
    function = enclosing_function(facts, statement)
    if function is None:
        return False
    params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
    if not any(p.name.value == name and isinstance(p.default, cst.Name) and p.default.value == "None"
               for p in params):
        return False
    body = getattr(function.body, "body", ())
    for earlier in body:
        if earlier is statement or inside(facts, statement, earlier):
            return True
        if name in target_names(earlier):
            return False
    return True


def inside(facts: FileFacts, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    """Whether `node` lies within `container`."""
    current: cst.CSTNode | None = node
    while current is not None:
        if current is container:
            return True
        current = facts.parent(current)
    return False


def first_parameter(function: cst.FunctionDef | None) -> str | None:
    """The name of a function's first positional parameter (`self` of a method)."""
    if function is None:
        return None
    params = [*function.params.posonly_params, *function.params.params]
    return params[0].name.value if params else None


def parameters_as_kept(method: cst.FunctionDef, receiver: str, definition: cst.CSTNode) -> cst.CSTNode:
    """The definition with each parameter of its method that the method kept on the object before it
    (`self.model = model` in `__init__`) read through the object instead (`self.model.item_table()`):
    the same object, named where the method's parameters are not bound."""
    parameters = set(parameter_names(method)) - {receiver}
    body = list(getattr(method.body, "body", ()))
    if definition not in body:
        return definition
    kept: dict[str, str] = {}
    for statement in body[:body.index(definition)]:
        for name in target_names(statement):
            kept.pop(name, None)  # a parameter bound anew is no longer what was passed
        single = isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        small = statement.body[0] if single else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name) \
                and small.value.value in parameters and isinstance(target := small.targets[0].target, cst.Attribute) \
                and isinstance(target.value, cst.Name) and target.value.value == receiver:
            kept.setdefault(small.value.value, f"{receiver}.{target.attr.value}")
    rebound = [text for statement in body for text in target_texts(statement)]
    for name in read_names(definition) & parameters:
        # Only an attribute the method sets once (not `self.net = nn.DataParallel(self.net)` later).
        if name in kept and rebound.count(kept[name]) == 1:
            definition = renamed(definition, name, kept[name])
    return definition


def bound_only_to_new_values(facts: FileFacts, scope: cst.FunctionDef | None, name: str) -> bool:
    """Whether every assignment to `name` in a function (or the module) binds it to what a call or
    an operation computes (`logits, value, hx = agent(obs, hx)`, `h = torch.zeros(n)`), never to a
    value some other name, attribute or container entry holds too (`hx = memory["hx"]`, `h = self.h`)."""
    found = False
    aliasing = False

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found, aliasing
            for target in node.targets:
                if name in _plain_names(target.target):
                    found = True
                    if isinstance(node.value, (cst.Name, cst.Attribute, cst.Subscript)):
                        aliasing = True
                    elif isinstance(node.value, (cst.Tuple, cst.List)) \
                            and isinstance(target.target, (cst.Tuple, cst.List)):
                        aliasing = True  # `h, c = a, b`: values other names hold

        def visit_For(self, node: cst.For) -> None:
            nonlocal aliasing
            if name in _plain_names(node.target):
                aliasing = True  # an item of a container

    (scope if scope is not None else facts.module).visit(Finder())
    return found and not aliasing


def renamed(statement: cst.CSTNode, old: str, new: str) -> cst.CSTNode:
    """The statement with every plain name `old` replaced by the expression `new`."""
    replacement = cst.parse_expression(new)

    class Renamer(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return replacement if updated.value == old else updated

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
            return updated.with_changes(attr=original.attr)  # `x.self` keeps its attribute name

        def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
            return updated.with_changes(keyword=original.keyword)  # `f(net=net)` keeps its keyword

    return statement.visit(Renamer())


def module_origin(facts: FileFacts, definition: cst.CSTNode) -> cst.BaseExpression | None:
    """What a single assignment computes, as an expression over module-level names: its own value
    at module level; for `self.w = w` in a function, the value of the module-level variable that the
    function's only call passes for parameter `w` (`Trainer(model, w)` after `w = ...`). None when
    that takes more than one assignment or call."""
    value = _single_value(definition)
    if value is None:
        return None
    function = enclosing_function(facts, definition)
    if function is None:
        return value
    if not isinstance(value, cst.Name) or value.value not in parameter_names(function):
        return None
    calls = calls_of(facts, function)
    if len(calls) != 1 or enclosing_function(facts, calls[0]) is not None:
        return None
    passed = argument_for(calls[0], function, value.value)
    if not isinstance(passed, cst.Name):
        return None
    found = [s for s in facts.module.body if isinstance(s, cst.SimpleStatementLine) and passed.value in assigned_names(s)]
    return _single_value(found[0]) if len(found) == 1 else None


def _single_value(statement: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            return small.value
    return None


def parameter_names(function: cst.FunctionDef) -> list[str]:
    """A function's parameter names, in order (positional first)."""
    params = function.params
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    kwargs = [params.star_kwarg] if params.star_kwarg is not None else []
    return [p.name.value for p in (*params.posonly_params, *params.params, *star, *params.kwonly_params, *kwargs)]


def calls_of(facts: FileFacts, function: cst.FunctionDef) -> list[cst.Call]:
    """The calls of a function by its name in the module: `train(...)` for a module-level function,
    `Trainer(...)` for the `__init__` of a module-level class."""
    owner = facts.parent(facts.parent(function))  # type: ignore[arg-type]
    if isinstance(owner, cst.ClassDef) and function.name.value == "__init__" and facts.parent(owner) is facts.module:
        name = owner.name.value
    elif facts.parent(function) is facts.module:
        name = function.name.value
    else:
        return []
    found: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == name:
                found.append(node)

    facts.module.visit(Finder())
    return found


def argument_for(call: cst.Call, function: cst.FunctionDef, parameter: str) -> cst.BaseExpression | None:
    """The expression a call passes for one parameter of the function (None when not plainly)."""
    names = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if names and names[0] == "self" and function.name.value == "__init__":
        names = names[1:]
    if any(arg.star for arg in call.args):
        return None
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
        if arg.keyword is None and index < len(names) and names[index] == parameter:
            return arg.value
    return None


def same_objects_in(facts: FileFacts, function: cst.FunctionDef, names: set[str]) -> bool:
    """Whether module-level names mean the same objects inside a function: none is a local there,
    or a parameter that every call of the function passes the same-named variable."""
    local = bound_names(function.body) | set(parameter_names(function))
    calls = calls_of(facts, function) if names & local else []
    for name in names & local:
        if name not in parameter_names(function) or name in bound_names(function.body) or not calls:
            return False
        for call in calls:
            passed = argument_for(call, function, name)
            if not isinstance(passed, cst.Name) or passed.value != name or enclosing_function(facts, call) is not None:
                return False
    return True


def instances_of(facts: FileFacts, class_name: str) -> list[str]:
    """The plain variables of the module that are assigned an instance of a class by its name
    (`model = CharRNN(...)`), each once."""
    found: list[str] = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            name = _dotted(node.value.func) if isinstance(node.value, cst.Call) else None
            if name is not None and name.rsplit(".", 1)[-1] == class_name and len(node.targets) == 1 \
                    and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value not in found:
                found.append(node.targets[0].target.value)

    facts.module.visit(Finder())
    return found
