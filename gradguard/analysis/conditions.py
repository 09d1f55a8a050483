"""Path conditions: the branch conditions a program state is known to satisfy.

A condition atom is a branch test over names (`flag`, `args.loss_type == "l2"`, `step % k == 0`,
`self.done`), keyed by its structure, with the truth it had on the path taken. A state assumes the
atoms of the branches that led to it, until a name an atom reads is assigned again. Two branches
testing the same atom are then correlated (the second follows the first), a branch the path has
already decided is not taken the other way, and `x == "a"` decides `x == "b"`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import libcst as cst

from gradguard.analysis import knowledge as K
from gradguard.analysis.names import dotted

# How many separate path partitions a block keeps before it forgets the oldest condition.
MAX_PARTS = 4


# A test of one name against literals: (key of the name, keys of the literals, whether the name is
# one of them when the test holds). `x == "a"` is ("x", {"'a'"}, True), `x not in (1, 2)` is
# ("x", {"1", "2"}, False).
Membership = tuple[str, frozenset[str], bool]


@dataclass(frozen=True)
class Atom:
    """One assumed condition: its key, the truth it had, and what assigning invalidates it."""

    key: str
    truth: bool
    deps: frozenset[str]  # dotted names the condition reads ("args.loss_type", "step")
    heap: frozenset[tuple[str, str]]  # instance attributes it reads, by heap key
    level: int  # the frame depth it was assumed in (locals of a finished call are gone)
    seq: int  # when it was assumed: the oldest is forgotten first
    text: str  # the condition as written, for messages
    equality: Membership | None = None  # see `equality_of`


# Syntax nodes hash by identity and never change: what is computed from one alone is cached (conditions
# are keyed again at every evaluation of their branch).
_NODE_CACHE = 1 << 16


@lru_cache(maxsize=_NODE_CACHE)
def key_of(expr: cst.BaseExpression) -> str | None:
    """The structural key of a condition expression, or None when it is no atom (it calls,
    or mixes in something whose value the model cannot name)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = key_of(expr.value)
        return None if base is None else f"{base}.{expr.attr.value}"
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return expr.value
    if isinstance(expr, cst.SimpleString):
        return repr(expr.evaluated_value)
    if isinstance(expr, cst.Subscript):
        base = key_of(expr.value)
        if base is None or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        index = key_of(expr.slice[0].slice.value)
        return None if index is None else f"{base}[{index}]"
    if isinstance(expr, cst.UnaryOperation):
        inner = key_of(expr.expression)
        return None if inner is None else f"({_OPERATORS.get(type(expr.operator), '?')}{inner})"
    if isinstance(expr, cst.BinaryOperation):
        left, right = key_of(expr.left), key_of(expr.right)
        if left is None or right is None:
            return None
        return f"({left} {_OPERATORS.get(type(expr.operator), '?')} {right})"
    if isinstance(expr, cst.Comparison):
        parts = [key_of(expr.left)]
        for comparison in expr.comparisons:
            parts.append(_OPERATORS.get(type(comparison.operator), "?"))
            parts.append(key_of(comparison.comparator))
        if any(p is None for p in parts):
            return None
        return "(" + " ".join(parts) + ")"  # type: ignore[arg-type]
    if isinstance(expr, cst.BooleanOperation):
        left, right = key_of(expr.left), key_of(expr.right)
        if left is None or right is None:
            return None
        word = "and" if isinstance(expr.operator, cst.And) else "or"
        return f"({left} {word} {right})"
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        # `x in ["vanilla", "lsgan"]`: a collection written out.
        items = [key_of(e.value) if not isinstance(e, cst.StarredElement) else None for e in expr.elements]
        if any(item is None for item in items):
            return None
        opening, closing = {cst.List: "[]", cst.Tuple: "()", cst.Set: "{}"}[type(expr)]
        return opening + ", ".join(items) + closing  # type: ignore[arg-type]
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in K.PURE_CALLS:
        # A builtin that reads its arguments without effects: a test calling it is still an atom.
        args = [key_of(a.value) for a in expr.args if a.keyword is None and not a.star]
        if len(args) != len(expr.args) or any(a is None for a in args):
            return None
        return f"{expr.func.value}(" + ", ".join(args) + ")"  # type: ignore[arg-type]
    return None


@lru_cache(maxsize=_NODE_CACHE)
def chains_of(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, ...]:
    """The maximal name and attribute chains a condition reads (`args.k`, `step`)."""
    found: list[cst.BaseExpression] = []

    def walk(node: cst.CSTNode) -> None:
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) is not None:
            if not (isinstance(node, cst.Name) and node.value in ("True", "False", "None")):
                found.append(node)  # type: ignore[arg-type]
            return
        if isinstance(node, cst.Call):
            for arg in node.args:
                walk(arg.value)
            return
        for child in node.children:
            walk(child)

    walk(expr)
    return tuple(found)


def strip_not(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
    """`not x` is the atom `x` taken the other way."""
    truth = True
    while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        expr = expr.expression
        truth = not truth
    return expr, truth


def condition_leaves(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The atoms a test is made of: `not` stripped, `and`/`or` split."""
    expr, _ = strip_not(expr)
    if isinstance(expr, cst.BooleanOperation):
        return [*condition_leaves(expr.left), *condition_leaves(expr.right)]
    return [expr]


def decide(expr: cst.BaseExpression, assume: dict[str, Atom]) -> bool | None:
    """The truth of a test on a path with these assumptions, or None when the path leaves it open."""
    expr, truth = strip_not(expr)
    result = _decide_positive(expr, assume)
    return None if result is None else result == truth


# How a test's equality with a literal is consulted (`x == "a"` is decided by any `x == ...`).
EQUALITY = "=="


@lru_cache(maxsize=_NODE_CACHE)
def consulted_keys(expr: cst.BaseExpression) -> frozenset[str]:
    """The assumptions `decide(expr, ...)` may read: the keys of the test and of its parts, and
    `==x` for a comparison of `x` with a literal (any atom saying what `x` equals)."""
    expr, _ = strip_not(expr)
    found: set[str] = set()
    key = key_of(expr)
    if key is not None:
        found.add(key)
    if isinstance(expr, cst.BooleanOperation):
        found |= consulted_keys(expr.left) | consulted_keys(expr.right)
    complement = complement_key(expr)
    if complement is not None:
        found.add(complement)
    query = equality_of(expr)
    if query is not None:
        found.add(EQUALITY + query[0])
    return frozenset(found)


# The comparison that holds exactly when one does not (`a > b` and `a <= b`).
_COMPLEMENTS: dict[type, str] = {
    cst.GreaterThan: "<=", cst.LessThanEqual: ">", cst.LessThan: ">=", cst.GreaterThanEqual: "<",
    cst.Equal: "!=", cst.NotEqual: "==", cst.Is: "is not", cst.IsNot: "is", cst.In: "not in", cst.NotIn: "in",
}


@lru_cache(maxsize=_NODE_CACHE)
def complement_key(expr: cst.BaseExpression) -> str | None:
    """The key of the test that holds exactly when this one comparison does not (`warmup > 0`
    and `warmup <= 0`), None for any other test."""
    if not isinstance(expr, cst.Comparison) or len(expr.comparisons) != 1:
        return None
    comparison = expr.comparisons[0]
    operator = _COMPLEMENTS.get(type(comparison.operator))
    left, right = key_of(expr.left), key_of(comparison.comparator)
    if operator is None or left is None or right is None:
        return None
    return f"({left} {operator} {right})"


def _decide_positive(expr: cst.BaseExpression, assume: dict[str, Atom]) -> bool | None:
    key = key_of(expr)
    if key is None:
        return None
    atom = assume.get(key)
    if atom is not None:
        return atom.truth
    complement = complement_key(expr)
    if complement is not None and (atom := assume.get(complement)) is not None:
        return not atom.truth
    if isinstance(expr, cst.BooleanOperation):
        left, right = decide(expr.left, assume), decide(expr.right, assume)
        if isinstance(expr.operator, cst.And):
            if left is False or right is False:
                return False
            return True if left and right else None
        if left is True or right is True:
            return True
        return False if left is False and right is False else None
    query = equality_of(expr)
    if query is not None:
        return _decide_membership(query, assume.values())
    return None


def _literal_key(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return key_of(expr)
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value
    return None


@lru_cache(maxsize=_NODE_CACHE)
def equality_of(expr: cst.BaseExpression) -> Membership | None:
    """For a test `x == lit`, `x != lit`, `x in (lit, ...)`, `x not in [lit, ...]`: what it says
    `x` is, as a `Membership`."""
    if not (isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1):
        return None
    comparison = expr.comparisons[0]
    left = key_of(expr.left)
    if left is None:
        return None
    if isinstance(comparison.operator, (cst.Equal, cst.NotEqual)):
        literal = _literal_key(comparison.comparator)
        if literal is None:
            return None
        return left, frozenset({literal}), isinstance(comparison.operator, cst.Equal)
    if isinstance(comparison.operator, (cst.In, cst.NotIn)) \
            and isinstance(comparison.comparator, (cst.List, cst.Tuple, cst.Set)):
        # Only collections written out: `x in "abc"` tests a substring.
        literals = [None if isinstance(e, cst.StarredElement) else _literal_key(e.value)
                    for e in comparison.comparator.elements]
        if not literals or any(literal is None for literal in literals):
            return None
        return left, frozenset(literals), isinstance(comparison.operator, cst.In)  # type: ignore[arg-type]
    return None


def _decide_membership(query: Membership, atoms: Iterable[Atom]) -> bool | None:
    """Whether `query` holds, from what the assumed tests of the same name say it is (one of
    some literals) and is not (none of others)."""
    left, literals, positive = query
    among: frozenset[str] | None = None
    excluded: set[str] = set()
    for atom in atoms:
        if atom.equality is None or atom.equality[0] != left:
            continue
        _, theirs, their_positive = atom.equality
        if atom.truth == their_positive:
            among = theirs if among is None else among & theirs
        else:
            excluded |= theirs
    answer: bool | None = None
    if among is not None:
        left_over = among - excluded
        if left_over and left_over <= literals:
            answer = True
        elif left_over and not left_over & literals:
            answer = False
    if answer is None and literals <= excluded:
        answer = False
    return None if answer is None else answer == positive


_OPERATORS: dict[type, str] = {
    cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=",
    cst.GreaterThan: ">", cst.GreaterThanEqual: ">=", cst.Is: "is", cst.IsNot: "is not",
    cst.In: "in", cst.NotIn: "not in", cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*",
    cst.Divide: "/", cst.FloorDivide: "//", cst.Modulo: "%", cst.Power: "**", cst.Minus: "-",
    cst.Plus: "+", cst.BitInvert: "~", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
    cst.LeftShift: "<<", cst.RightShift: ">>", cst.MatrixMultiply: "@",
}


# The key of the atom a parsed command-line namespace brings for each option with `choices`.
OPTION_ATOM = "<option>:"

# The key prefix of the atom that ties a flag to the test it was assigned from, until either is
# assigned again: FLAG_ATOM + the flag's name + "=" + the test's key (`flag_key`).
FLAG_ATOM = "<flag>:"


def flag_key(name: str, test: cst.BaseExpression) -> str | None:
    key = key_of(test)
    return None if key is None else f"{FLAG_ATOM}{name}={key}"


def flag_test(value: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """The test a flag's assigned value stands for, and the flag's truth when the test holds:
    `per_context = True if (masks is not None and replay) else False`, `use_gp = args.gp > 0 and
    step % k == 0`, `skip = not (a or b)`. None for any other value."""
    if isinstance(value, cst.IfExp):
        body, other = value.body, value.orelse
        if not (isinstance(body, cst.Name) and isinstance(other, cst.Name)
                and {body.value, other.value} == {"True", "False"}):
            return None
        test, positive = strip_not(value.test)
        positive = positive == (body.value == "True")
    else:
        test, positive = strip_not(value)
        if not isinstance(test, (cst.Comparison, cst.BooleanOperation)):
            return None
    return (test, positive) if key_of(test) is not None else None


def option_dest(call: cst.Call) -> str | None:
    """The attribute `parser.add_argument("--loss-type", ...)` stores its option as (`loss_type`, or
    its `dest=`), None when the call does not say it plainly."""
    names = [arg.value.evaluated_value for arg in call.args
             if arg.keyword is None and isinstance(arg.value, cst.SimpleString)]
    if not names or len(names) != sum(arg.keyword is None for arg in call.args) \
            or not all(isinstance(name, str) for name in names):
        return None
    dest = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "dest"), None)
    flags = [name for name in names if name.startswith("-")]  # type: ignore[union-attr]
    if isinstance(dest, cst.SimpleString):
        stored = dest.evaluated_value
    elif flags:
        flag = next((f for f in flags if f.startswith("--")), flags[0])  # type: ignore[union-attr]
        stored = flag.lstrip("-").replace("-", "_")
    else:
        stored = names[0]
    return stored if isinstance(stored, str) and stored.isidentifier() else None


def option_values(call: cst.Call) -> tuple[str, frozenset[str]] | None:
    """For `parser.add_argument("--loss", choices=["l1", "l2"], default="l1")`: the attribute the
    option is stored as and every literal it can hold (its choices, and the default when the option
    may be left out: None when no default is given). None when that is not known from the call."""
    stored = option_dest(call)
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if stored is None or "choices" not in keywords or "nargs" in keywords or "action" in keywords:
        return None
    flags = [arg for arg in call.args if arg.keyword is None and isinstance(arg.value, cst.SimpleString)
             and str(arg.value.evaluated_value).startswith("-")]
    choices = keywords["choices"]
    if not isinstance(choices, (cst.List, cst.Tuple, cst.Set)) or not choices.elements:
        return None
    values = [None if isinstance(e, cst.StarredElement) else _literal_key(e.value) for e in choices.elements]
    if any(value is None for value in values):
        return None
    required = keywords.get("required")
    if flags and not (isinstance(required, cst.Name) and required.value == "True"):
        # An option left out holds its default, which argparse does not check against the choices.
        default = keywords.get("default")
        missing = "None" if default is None else _literal_key(default)
        if missing is None:
            return None
        values.append(missing)
    return stored, frozenset(values)  # type: ignore[arg-type]

