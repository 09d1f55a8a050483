"""Tensors and lists made afresh at every call, and tensors held under two names.

- A list of a forward's layer outputs (`outputs = [x]`, appended per layer, rebuilt by a comprehension
  in one arm: GraphCL's jumping knowledge, r53) and a tensor preallocated per forward whose slots a
  time loop writes (`voltages = torch.zeros(...)`: norse, r56) are new objects at every call: they do
  not grow across the training loop, so an old generation of their items met at the backward is no
  evidence of a graph carried over (`ExpressionEvaluation.note_reset`).
- Their buggy twins keep the list or the tensor on the module (`self.history`, `self.voltages`): the
  history grows, and the slots written in place keep the previous step's freed graph. Written through
  a local name (`voltages = self.voltages`), the write still changes the module's tensor
  (`Frame.tensor_aliases`). The fix detaches the stored tensor (the loss trains through what this step
  writes: `Carrier.written_into_loss`), never a `torch.no_grad()` around the write, which would leave the
  backward nothing to train (`fixcheck` refuses a fix that makes a backward's tensor graphless); the
  carrier is named as the module holds it (`self.voltages`), whatever local name wrote it.
Each program runs under torch as the test says.
"""

from __future__ import annotations

from pathlib import Path

from fixture_support import run_programs, values_after

from gradguard.analysis import analyze
from gradguard.fixcheck import _new_graphless_backward, plain_analysis
from gradguard.fixes import choose_fixes, fix_text_round

GNN = '''"""Contrastive pre-training of a small GNN whose forward keeps a list of layer outputs."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))

    def forward(self, x, adj):
        return self.mlp(x + adj @ x)


class GNN(nn.Module):
    def __init__(self, layers=3, dim=16, jk="last"):
        super().__init__()
        self.jk = jk
        self.embed = nn.Embedding(10, dim)
        self.layers = nn.ModuleList([Layer(dim) for _ in range(layers)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(dim) for _ in range(layers)])
        HISTORY_INIT

    def forward(self, x, adj):
        x = self.embed(x)
        HISTORY_START
        for i, layer in enumerate(self.layers):
            h = self.norms[i](layer(outputs[i], adj))
            if i == len(self.layers) - 1:
                h = F.dropout(h, 0.1, training=self.training)
            else:
                h = F.dropout(F.relu(h), 0.1, training=self.training)
            outputs.append(h)
        if self.jk == "last":
            return outputs[-1]
        outputs = [h.unsqueeze(0) for h in outputs[-len(self.layers) - 1:]]
        return torch.max(torch.cat(outputs, dim=0), dim=0)[0]


def contrastive(z1, z2, t=0.5):
    z1 = F.normalize(z1.mean(0, keepdim=True) + 0.01 * torch.randn(4, z1.shape[1]), dim=1)
    z2 = F.normalize(z2.mean(0, keepdim=True) + 0.01 * torch.randn(4, z2.shape[1]), dim=1)
    logits = z1 @ z2.t() / t
    return F.cross_entropy(logits, torch.arange(z1.shape[0]))


def train(model, loader, optimizer):
    model.train()
    for view1, view2 in loader:
        optimizer.zero_grad()
        loss = contrastive(model(*view1), model(*view2))
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--jk", default="max", choices=["last", "max"])
    args = parser.parse_args()
    torch.manual_seed(0)
    model = GNN(jk=args.jk)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def view():
        return torch.randint(0, 10, (12,)), (torch.rand(12, 12) > 0.7).float()

    loader = [(view(), view()) for _ in range(3)]
    for epoch in range(2):
        train(model, loader, optimizer)
    print("ok")
'''

# norse's shape (r56, the reduction of correct code): three cells threading states through a time loop.
R56 = Path(__file__).resolve().parents[2] / "bench" / "realcode_reductions" / \
    "r56_norse_three_cells_states_through_base_init.py"
SNN = ('"""Spiking cells whose states run through a time loop; each step\'s output written into a slot."""\n'
       + R56.read_text(encoding="utf-8").split('"""', 2)[2].lstrip("\n"))

GNN_FRESH = GNN.replace("        HISTORY_INIT\n", "").replace("HISTORY_START", "outputs = [x]")
GNN_KEPT = GNN.replace("HISTORY_INIT", "self.history = []").replace(
    "HISTORY_START", "outputs = self.history\n        outputs.append(x)")
SNN_FRESH = SNN
SNN_KEPT = SNN.replace(
    "        self.out = torch.nn.Linear(16, 4)\n",
    "        self.out = torch.nn.Linear(16, 4)\n        self.voltages = torch.zeros(5, 2, 4)\n").replace(
    "        voltages = torch.zeros(x.shape[0], x.shape[1], 4)\n", "        voltages = self.voltages\n")
SNN_KEPT_DIRECT = SNN_KEPT.replace("        voltages = self.voltages\n", "").replace(
    "voltages[ts] = self.out(z)", "self.voltages[ts] = self.out(z)").replace(
    "return voltages.sum(0)", "return self.voltages.sum(0)")


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


def _errors(source: str) -> list[tuple[str, str]]:
    lines = source.splitlines()
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source) if d.severity.name == "ERROR"]


def test_containers_made_at_every_call_are_clean() -> None:
    assert _errors(GNN_FRESH) == []
    assert _errors(GNN_FRESH.replace('default="max"', 'default="last"')) == []
    assert _errors(SNN_FRESH) == []


def test_the_same_containers_kept_on_the_module_are_found() -> None:
    assert _errors(GNN_KEPT) == [("GG003", "loss.backward()")]
    for source in (SNN_KEPT_DIRECT, SNN_KEPT):
        found = analyze(source)
        assert [(d.code, "`self.voltages`" in d.message) for d in found] == [("GG003", True)]


def test_the_fix_of_a_stored_tensor_detaches_it_and_trains(tmp_path: Path) -> None:
    fixed = {}
    for name, source in (("snn_direct_fixed", SNN_KEPT_DIRECT), ("snn_kept_fixed", SNN_KEPT)):
        found = analyze(source)
        assert [d.fix is not None for d in found] == [True], "a fix is offered"
        fixed[name], _ = fix_text_round(source, choose_fixes(found, unsafe=True))
        assert "no_grad" not in fixed[name] and "self.voltages = self.voltages.detach()" in fixed[name]
        assert _errors(fixed[name]) == []
    programs = {name: _write(tmp_path, name, source) for name, source in [
        ("gnn_fresh", GNN_FRESH), ("gnn_kept", GNN_KEPT), ("snn_fresh", SNN_FRESH), ("snn_kept", SNN_KEPT),
        ("snn_direct", SNN_KEPT_DIRECT), *fixed.items()]}
    ended = run_programs({path: [] for path in programs.values()})
    for name in ("gnn_fresh", "snn_fresh", *fixed):
        assert ended[programs[name]].ok and ended[programs[name]].stdout.strip().endswith("ok"), name
    for name in ("gnn_kept", "snn_kept", "snn_direct"):
        assert "backward through the graph a second time" in (ended[programs[name]].error_message or ""), name


def test_a_write_through_a_local_name_changes_the_attribute() -> None:
    """The model itself: after `voltages = self.voltages` and `voltages[ts] = out`, the module's tensor
    holds the written graph (before the alias, a fresh tensor without nodes)."""
    held = values_after(SNN_KEPT, "return voltages", "self.voltages", function="Net.forward")
    assert held and all(value.nodes for value in held)


def test_a_fix_that_leaves_a_backward_without_a_graph_is_refused() -> None:
    """`fixcheck` compares the backward calls reached with a tensor known to carry no graph."""
    under_no_grad = SNN_KEPT_DIRECT.replace(
        "            self.voltages[ts] = self.out(z)",
        "            with torch.no_grad():\n                self.voltages[ts] = self.out(z)")
    assert plain_analysis(SNN_KEPT_DIRECT).graphless_backwards == ()
    row = _new_graphless_backward(SNN_KEPT_DIRECT, None, plain_analysis(under_no_grad))
    assert row is not None and under_no_grad.splitlines()[row - 1].strip() == "loss.backward()"
