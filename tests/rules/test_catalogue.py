"""The rule documents in `rules/`: their form, and their 1:1 match with the rule modules."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from doc_support import KINDS, SECTIONS, codes, documents, example

from gradguard import catalogue
from gradguard.analysis import analyze
from gradguard.model import Applicability, Severity
from gradguard.rules import all_rules

REPO = Path(__file__).resolve().parents[2]
RULES_DIR = REPO / "rules"
RULE_MODULES = REPO / "gradguard" / "rules"

SEVERITY = {f"GG{n:03d}": Severity.ERROR for n in range(1, 9)} | {
    "GG009": Severity.WARNING,
    "GG010": Severity.WARNING,
    "GG011": Severity.ERROR,
    "GG100": Severity.WARNING,
}
DEFAULT_FIX = {
    "GG001": Applicability.UNSAFE,
    "GG002": Applicability.UNSAFE,
    "GG003": Applicability.SAFE,
    "GG004": Applicability.UNSAFE,
    "GG005": Applicability.SAFE,
    "GG006": Applicability.UNSAFE,
    "GG007": Applicability.UNSAFE,
    "GG008": Applicability.SAFE,
    "GG009": Applicability.UNSAFE,
    "GG010": Applicability.UNSAFE,
    "GG011": Applicability.UNSAFE,
    "GG100": Applicability.SAFE,
}
TORCH_ERROR = {
    "*": "Trying to backward through the graph a second time",
    "GG011": "one of the variables needed for gradient computation has been modified by an inplace operation",
    "GG100": "",  # an unused directive raises nothing
}
HEADING = re.compile(r"^(#{1,2}) (.+)$", re.MULTILINE)
UNFILLED = re.compile(r"\{\w*\}")


def test_the_catalogue_is_read_from_the_checkout() -> None:
    assert catalogue.catalogue_dir().resolve() == RULES_DIR.resolve()


@pytest.mark.parametrize("path", sorted(RULES_DIR.glob("GG*.md")), ids=lambda p: p.name)
def test_every_document_parses_and_is_named_after_its_code_and_name(path: Path) -> None:
    doc = catalogue.parse_document(path)
    assert path.name == f"{doc.code}-{doc.name}.md"
    assert re.fullmatch(r"GG\d{3}", doc.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", doc.name)


def test_rule_modules_and_documents_match_one_to_one() -> None:
    docs = {doc.code: doc for doc in documents()}
    rules = {rule.code: rule for rule in all_rules()}
    assert sorted(rules) == sorted(docs)
    for code, rule in rules.items():
        module = type(rule).__module__.rsplit(".", 1)[-1]
        assert module == f"{code.lower()}_{docs[code].name.replace('-', '_')}"
    files = sorted(p.stem for p in RULE_MODULES.glob("gg[0-9]*.py"))
    assert files == sorted(
        f"{doc.code.lower()}_{doc.name.replace('-', '_')}" for doc in docs.values()
    )


def test_every_rule_has_a_document_and_the_expected_codes() -> None:
    assert codes() == sorted(SEVERITY)


@pytest.mark.parametrize("code", codes())
def test_front_matter(code: str) -> None:
    doc = catalogue.get(code)
    assert doc.severity is SEVERITY[code]
    assert doc.fix_applicability is DEFAULT_FIX[code]
    assert doc.torch_error == TORCH_ERROR.get(code, TORCH_ERROR["*"])
    assert doc.summary.endswith(".") and "\n" not in doc.summary
    for text in (doc.message, doc.fix_title):
        assert text and not text.endswith("."), text
        fields = [
            field
            for _, field, _, _ in string.Formatter().parse(text)
            if field is not None
        ]
        assert all(field.isidentifier() for field in fields), (
            f"{text!r}: positional or odd fields"
        )


@pytest.mark.parametrize("code", codes())
def test_sections_come_in_the_template_order(code: str) -> None:
    doc = catalogue.get(code)
    headings = HEADING.findall(doc.body)
    assert headings[0] == ("#", f"{doc.code} {doc.name}")
    assert [title for level, title in headings[1:]] == list(SECTIONS)
    assert all(level == "##" for level, _ in headings[1:])
    for title in SECTIONS:
        section = doc.body.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
        assert section.strip(), f"section {title!r} is empty"


@pytest.mark.parametrize("code", codes())
def test_examples_are_one_bad_one_good_one_fixed_in_their_sections(code: str) -> None:
    doc = catalogue.get(code)
    assert [e.kind for e in doc.examples] == list(KINDS)
    for kind, section in zip(KINDS, ("Example", "Use instead", "Fix"), strict=True):
        text = doc.body.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        assert f"```python {kind}\n" in text


@pytest.mark.parametrize("code", codes())
def test_examples_are_short_runnable_torch_programs(code: str) -> None:
    doc = catalogue.get(code)
    for kind in KINDS:
        source = example(doc, kind).source
        compile(source, f"{code}-{kind}.py", "exec")
        assert re.search(r"^import torch$", source, re.MULTILINE), (
            f"{kind} example does not import torch"
        )
        assert ".backward(" in source or "trainer.fit(" in source
        lines = source.splitlines()
        assert 10 <= len(lines) <= 30, f"{kind} example has {len(lines)} lines"


@pytest.mark.parametrize("code", codes())
def test_markers_flag_the_rule_itself_and_only_in_the_bad_example(code: str) -> None:
    doc = catalogue.get(code)
    bad = example(doc, "bad")
    assert bad.expected, "the bad example marks no line"
    assert {marked for _, marked in bad.expected} == {code}
    assert not example(doc, "good").expected
    assert not example(doc, "fixed").expected
    assert "# [GG" not in bad.source


@pytest.mark.parametrize("code", codes())
def test_references_are_links(code: str) -> None:
    doc = catalogue.get(code)
    references = doc.body.split("## References\n", 1)[1]
    links = re.findall(
        r"^- \[(?:[^\[\]]|\[[^\]]*\])+\]\((https://[^)\s]+)\)$",
        references,
        re.MULTILINE,
    )
    assert links and len(links) == len(
        [line for line in references.splitlines() if line.strip()]
    )


@pytest.mark.parametrize("code", codes())
def test_findings_on_the_bad_example_fill_every_field(code: str) -> None:
    """The message and fix title of each finding have their `{field}`s filled with real names."""
    diagnostics = analyze(example(catalogue.get(code), "bad").source)
    for diagnostic in diagnostics:
        texts = [diagnostic.message] + (
            [diagnostic.fix.message] if diagnostic.fix else []
        )
        for text in texts:
            assert not UNFILLED.search(text), text
            assert "`None`" not in text and "`` " not in text, text
