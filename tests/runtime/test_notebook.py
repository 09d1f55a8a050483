"""`%load_ext gradguard` in a real Jupyter kernel (nbclient) and in a terminal IPython shell."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

CELLS = [
    f"import sys\nsys.path.insert(0, {str(REPO)!r})\nsys.path.insert(0, {str(HERE)!r})",
    "%load_ext gradguard",
    (
        "import torch\nimport torch.nn as nn\n"
        "cell = nn.GRUCell(3, 4)\n"
        "opt = torch.optim.SGD(cell.parameters(), lr=0.1)\n"
        "hidden = torch.zeros(2, 4)"
    ),
    (
        "for step in range(3):\n"
        "    hidden = cell(torch.randn(2, 3), hidden)\n"
        "    loss = hidden.pow(2).mean()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()"
    ),
    "print('after the error, the kernel still works:', 1 + 1)",
    "%unload_ext gradguard\nprint(torch.autograd._engine_run_backward.__module__)",
]


@pytest.mark.slow
def test_notebook_shows_the_diagnosis_as_html() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = nbclient.NotebookClient(
        notebook,
        timeout=240,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(REPO)}},
    )
    client.execute()
    failing = notebook.cells[3].outputs
    errors = [o for o in failing if o.output_type == "error"]
    assert len(errors) == 1
    assert errors[0].ename == "RuntimeError"
    assert errors[0].evalue.startswith("Trying to backward through the graph a second time")
    traceback_text = "\n".join(errors[0].traceback)
    assert "gradguard: backward call #2 reused a graph that call #1 freed" in traceback_text
    displays = [o for o in failing if o.output_type == "display_data"]
    assert len(displays) == 1
    html = displays[0].data["text/html"]
    assert "hidden" in html and "hidden.detach()" in html and "GG003" in html
    assert "<pre" in html
    assert "<svg" in html  # the picture of the failing graph, inline
    plain = displays[0].data["text/plain"]
    assert "carrier       `hidden`" in plain
    # Locations as IPython names them just above, not the kernel's temporary file.
    assert "Cell In[4], line 5" in plain and "ipykernel_" not in plain + html
    assert failing.index(errors[0]) < failing.index(displays[0])
    assert "after the error, the kernel still works: 2" in notebook.cells[4].outputs[0].text
    assert notebook.cells[5].outputs[0].text.strip() == "torch.autograd.graph"


def test_terminal_ipython_prints_the_panel_after_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    shell: Any = interactive.InteractiveShell.instance()
    try:
        for source in CELLS[:2]:
            shell.run_cell(source)
        capsys.readouterr()
        shell.run_cell(CELLS[2])
        result = shell.run_cell(CELLS[3])
        out = capsys.readouterr().out
        assert isinstance(result.error_in_exec, RuntimeError)
        assert sys.last_value is result.error_in_exec
        assert "RuntimeError" in out and "Trying to backward through the graph a second time" in out
        assert "╭" in out and "hidden = hidden.detach()" in out
        assert "Cell In[" in out
        assert out.index("Trying to backward") < out.index("╭")
        assert out.count("reused a graph that call #1 freed") == 1
    finally:
        shell.run_cell("%unload_ext gradguard")
        interactive.InteractiveShell.clear_instance()
