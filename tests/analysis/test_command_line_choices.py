"""Options declared with `choices=`: a chain of tests over one that covers every choice leaves no
path past its last arm (issue 8's "an if/elif chain made exhaustive by argparse choices").

The word-language-model shape: the state of an LSTM is a tuple and a GRU's a tensor, so each cell
type detaches its state in its own arm. With `--model` limited to the two, no iteration skips both
arms; with an arm that forgets to detach, or an option that may be left out (no default: None),
the path that carries the state undetached is real, and found.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradguard.analysis import analyze
from gradguard.analysis.conditions import option_values

PROGRAM = """
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description="a recurrent language model, truncated BPTT")
parser.add_argument("--model", type=str, {model_option}, help="cell type")
parser.add_argument("--bptt", type=int, default=5)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args([])


class RNNModel(nn.Module):
    def __init__(self, kind, ntoken, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, nhid)
        self.rnn = nn.LSTM(nhid, nhid) if kind == "LSTM" else nn.GRU(nhid, nhid)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.encoder(x), hidden)
        return self.decoder(out), hidden


def train(model, data, hidden):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        for i in range(0, data.size(0) - 1, args.bptt):
            x, y = data[i:i + args.bptt], data[i + 1:i + 1 + args.bptt]
            if args.model == "LSTM":
                hidden = tuple(h.detach() for h in hidden)
            elif args.model == "GRU":
                {gru_arm}
            optimizer.zero_grad()
            output, hidden = model(x, hidden)
            loss = criterion(output.view(-1, ntoken), y.reshape(-1))
            loss.backward()
            optimizer.step()


ntoken, nhid, batch = 20, 8, 3
model = RNNModel(args.model, ntoken, nhid)
data = torch.randint(0, ntoken, (41, batch))
if args.model == "LSTM":
    hidden = (torch.zeros(1, batch, nhid), torch.zeros(1, batch, nhid))
else:
    hidden = torch.zeros(1, batch, nhid)
train(model, data, hidden)
"""

CHOICES = 'default="GRU", choices=["LSTM", "GRU"]'
DETACH = "hidden = hidden.detach()"


def _program(model_option: str = CHOICES, gru_arm: str = DETACH) -> str:
    return textwrap.dedent(PROGRAM).replace("{model_option}", model_option).replace("{gru_arm}", gru_arm)


def _findings(source: str) -> list[tuple[str, int]]:
    return [(d.code, d.span.start.row) for d in analyze(source)]


def _backward_line(source: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if "loss.backward()" in line)


def test_a_chain_covering_every_choice_leaves_no_path_past_it() -> None:
    assert _findings(_program()) == []


def test_the_same_chain_over_choices_written_as_a_tuple_with_the_option_required() -> None:
    option = 'required=False, default="LSTM", choices=("GRU", "LSTM")'
    assert _findings(_program(option).replace("parse_args([])", "parse_args(['--model', 'GRU'])")) == []


def test_an_arm_that_forgets_to_detach_is_found() -> None:
    source = _program(gru_arm="pass")
    assert ("GG003", _backward_line(source)) in _findings(source)


def test_an_option_that_may_be_left_out_holds_none_and_skips_every_arm() -> None:
    source = _program('choices=["LSTM", "GRU"]')
    assert ("GG003", _backward_line(source)) in _findings(source)


def test_an_option_assigned_after_parsing_holds_what_was_assigned() -> None:
    source = _program().replace("args = parser.parse_args([])", 'args = parser.parse_args([])\nargs.model = "RNN"')
    assert ("GG003", _backward_line(source)) in _findings(source)


def test_the_programs_run_as_the_model_says() -> None:
    pytest.importorskip("torch")
    exec(compile(_program(), "<choices>", "exec"), {"__name__": "__main__"})
    for buggy in (_program(gru_arm="pass"), _program('choices=["LSTM", "GRU"]')):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            exec(compile(buggy, "<buggy>", "exec"), {"__name__": "__main__"})


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('p.add_argument("--loss", choices=["l1", "l2"], default="l1")', ("loss", {"'l1'", "'l2'"})),
        ('p.add_argument("--loss", choices=["l1", "l2"])', ("loss", {"'l1'", "'l2'", "None"})),
        ('p.add_argument("--loss", choices=["l1"], default="huber")', ("loss", {"'l1'", "'huber'"})),
        ('p.add_argument("-l", "--loss-type", choices=(1, 2), required=True)', ("loss_type", {"1", "2"})),
        ('p.add_argument("--x", dest="kind", choices={"a", "b"}, default="a")', ("kind", {"'a'", "'b'"})),
        ('p.add_argument("mode", choices=["train", "eval"])', ("mode", {"'train'", "'eval'"})),
        # Not known from the call: choices not written out, several values, a default computed.
        ('p.add_argument("--loss", choices=LOSSES)', None),
        ('p.add_argument("--loss", choices=["l1"], nargs="+")', None),
        ('p.add_argument("--loss", choices=["l1"], default=os.environ["LOSS"])', None),
        ('p.add_argument("--lr", type=float, default=0.1)', None),
    ],
)
def test_what_an_option_can_hold_is_read_from_its_declaration(
        call: str, expected: tuple[str, set[str]] | None) -> None:
    found = option_values(cst.parse_expression(call))  # type: ignore[arg-type]
    assert (found if found is None else (found[0], set(found[1]))) == expected


def test_an_option_another_parser_declares_without_choices_may_hold_anything() -> None:
    """Two parsers of one script (training and evaluation) both declare `--model`, one without
    choices: parsed by that one, `args.model` may be None, and the chain is not exhaustive."""
    source = _program().replace(
        "args = parser.parse_args([])",
        'eval_parser = argparse.ArgumentParser()\neval_parser.add_argument("--model", type=str)\n'
        "args = eval_parser.parse_args([])")
    assert ("GG003", _backward_line(source)) in _findings(source)
