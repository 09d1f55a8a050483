"""A framework's loop over batches is a loop (issue 9): Lightning calls `training_step` once per batch
and backward()s what it returns, so what the module keeps on `self` from one call reaches the next
call's graph. A recurrent state kept on `self` without a detach fails on the second batch; the
analysis runs such a method twice, the second time with what the first left on the object (and
the graphs the framework's backward freed), and finds it at the method with the carrier named.
The buggy program really raises under Lightning; `--fix` makes it train as the hand fix does."""

from __future__ import annotations

import textwrap

import pytest
from fixture_support import run_source_many

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round
from gradguard.model import Severity

TBPTT = textwrap.dedent('''\
    """A GRU forecaster trained with Lightning on consecutive windows of one long series; the hidden
    state is carried from one window (batch) to the next on the module."""
    import lightning as L
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    WINDOW, BATCH = 12, 4


    class Forecaster(L.LightningModule):
        def __init__(self, n_in=3, n_hidden=16):
            super().__init__()
            self.rnn = nn.GRU(n_in, n_hidden, batch_first=True)
            self.head = nn.Linear(n_hidden, n_in)
            self.hidden = None

        def training_step(self, batch, batch_idx):
            x, y = batch
            out, self.hidden = self.rnn(x, self.hidden)
            loss = F.mse_loss(self.head(out), y)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-2)


    def windows(series):
        xs = [series[:, i:i + WINDOW] for i in range(0, series.size(1) - WINDOW - 1, WINDOW)]
        ys = [series[:, i + 1:i + WINDOW + 1] for i in range(0, series.size(1) - WINDOW - 1, WINDOW)]
        return TensorDataset(torch.cat(xs), torch.cat(ys))


    if __name__ == "__main__":
        torch.manual_seed(0)
        t = torch.linspace(0, 24, 121)
        series = torch.stack([torch.sin(t), torch.cos(t), torch.sin(2 * t)], -1).unsqueeze(0).repeat(BATCH, 1, 1)
        loader = DataLoader(windows(series), batch_size=BATCH, shuffle=False)
        model = Forecaster()
        trainer = L.Trainer(max_epochs=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False, accelerator="cpu")
        trainer.fit(model, loader)
        print("params", round(sum(p.sum().item() for p in model.parameters()), 4))
    ''')

HAND = TBPTT.replace("        out, self.hidden = self.rnn(x, self.hidden)\n",
                     "        if self.hidden is not None:\n"
                     "            self.hidden = self.hidden.detach()\n"
                     "        out, self.hidden = self.rnn(x, self.hidden)\n")
# Correct twins: the state detached where it is kept, or started afresh for every batch.
CLEAN_DETACHED = TBPTT.replace("out, self.hidden = self.rnn(x, self.hidden)",
                               "out, hidden = self.rnn(x, self.hidden)\n        self.hidden = hidden.detach()")
CLEAN_FRESH = TBPTT.replace("out, self.hidden = self.rnn(x, self.hidden)", "out, self.hidden = self.rnn(x)")
# Kept on self but never read by the next step's graph: nothing to report.
CLEAN_LOGGED = TBPTT.replace("        self.log(\"train_loss\", loss)\n",
                             "        self.last_loss = loss\n        self.log(\"train_loss\", loss)\n"
                             ).replace("out, self.hidden = self.rnn(x, self.hidden)", "out, _ = self.rnn(x)")


def _errors(source: str) -> list[tuple[str, int]]:
    compile(source, "twin.py", "exec")
    return [(d.code, d.span.start.row) for d in analyze(source) if d.severity is Severity.ERROR]


def test_state_kept_on_self_across_training_steps_is_found_at_the_step_with_its_carrier() -> None:
    (found,) = analyze(TBPTT)
    row = TBPTT.splitlines().index("    def training_step(self, batch, batch_idx):") + 1
    assert (found.code, found.span.start.row) == ("GG003", row)
    assert "`self.hidden`" in found.message and "Lightning" in found.message


@pytest.mark.parametrize("source", [CLEAN_DETACHED, CLEAN_FRESH, CLEAN_LOGGED], ids=["detached", "fresh", "logged"])
def test_the_correct_twins_are_silent(source: str) -> None:
    assert _errors(source) == []


def test_the_fixed_program_trains_as_the_hand_fix() -> None:
    assert HAND != TBPTT
    fixed, applied = fix_text_round(TBPTT, choose_fixes(analyze(TBPTT), unsafe=False))
    assert applied == 1
    runs = run_source_many({"lightning_buggy.py": TBPTT, "lightning_fixed.py": fixed, "lightning_hand.py": HAND})
    assert runs["lightning_buggy.py"].error_type == "RuntimeError"
    assert runs["lightning_fixed.py"].error_type is None, runs["lightning_fixed.py"].stderr
    assert runs["lightning_fixed.py"].stdout == runs["lightning_hand.py"].stdout
