"""The runtime panel and note: IPython cells named as IPython names them, code wrapped and never cut."""

from __future__ import annotations

import io
import sys
import types

import pytest

from gradguard.runtime import render
from gradguard.runtime.diagnosis import (
    CallSite,
    Carrier,
    Diagnosis,
    ErrorKind,
    Fix,
    FixKind,
)

CELL_FILE = "/tmp/ipykernel_4242/1234567.py"
LONG_FIX = (
    "hidden_state_for_the_next_window = hidden_state_for_the_next_window.detach()"
    "  # cut the graph: the next window's backward must not reach this one's"
)


def _diagnosis(filename: str) -> Diagnosis:
    return Diagnosis(
        error=ErrorKind.DOUBLE_BACKWARD,
        message="Trying to backward through the graph a second time",
        failing_call=CallSite(filename, 37, "<module>", 2, source="loss.backward()"),
        freed_by=CallSite(filename, 37, "<module>", 1, source="loss.backward()"),
        node=None,
        carrier=Carrier("hidden_state_for_the_next_window", filename, 35, "<module>"),
        fix=Fix(FixKind.DETACH, LONG_FIX, where="before the forward pass"),
        rule="GG003",
        explanation="",
    )


@pytest.fixture
def ipython_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """An IPython whose compiler knows CELL_FILE as the cell In[2] (as ipykernel records it)."""
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={CELL_FILE: 2}))
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)


@pytest.mark.usefixtures("ipython_cells")
def test_cells_are_named_as_ipython_names_them() -> None:
    note = render.note_text(_diagnosis(CELL_FILE))
    assert "Cell In[2], line 37 in <module>()" in note
    assert "last assigned at Cell In[2], line 35" in note
    assert "ipykernel_4242" not in note
    assert render.location("/elsewhere/train.py", 5) == "/elsewhere/train.py:5"


def test_files_keep_their_paths_outside_ipython(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert "/tmp/ipykernel_4242/1234567.py:37 in <module>()" in render.note_text(_diagnosis(CELL_FILE))


@pytest.mark.parametrize("width", [80, 60])
def test_the_panel_wraps_code_and_never_cuts_it(width: int) -> None:
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, no_color=True, highlight=False).print(render.panel(_diagnosis("train.py")))
    text = out.getvalue()
    assert "\u2026" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    # Every character of the fix survives, only spread over lines inside the panel's border.
    inside = "".join(line.strip("│ ").strip() for line in text.splitlines())
    assert "".join(LONG_FIX.split()) in "".join(inside.split())
