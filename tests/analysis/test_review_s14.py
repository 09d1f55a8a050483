"""Programs a review of the fourteenth session's changes built against them (`review_s14/`), each the
reduction of a wrong result or a wrong fix those changes first gave: what an entry point analysed
alone keeps when the module's run reached the same backward, an optimizer step on one arm of an `if`,
the program's own in-place write that a clone must not hide, statements of one-line suites."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_support import run_source_many

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round

HERE = Path(__file__).parent / "review_s14"


def _source(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def fixed_runs() -> dict:
    """The programs whose fixes must run, fixed (`--fix --unsafe-fixes`) and run in one batch."""
    names = ["one_line_arms_carry_state.py", "critic_stepped_by_hand.py"]
    return dict(run_source_many({
        name: fix_text_round(_source(name), choose_fixes(analyze(_source(name)), unsafe=True))[0] for name in names}))


def _codes(name: str) -> list[str]:
    return [d.code for d in analyze(_source(name))]


def test_a_function_the_module_never_calls_keeps_its_finding_in_a_helper_the_module_reaches() -> None:
    # `main_stateful()` (a console script's entry) trains with the state carried; the module's own
    # run trains stateless through the same `train`: that run says nothing of the other caller.
    assert _codes("stateful_entry_never_called.py") == ["GG003"]


def test_a_shared_helper_reached_cleanly_by_one_caller_keeps_the_other_caller_s_finding() -> None:
    # `optimize(loss, opt)` is reached by the module through `pretrain` (correct); `finetune`, alone,
    # backward-s features computed once before its loop.
    assert _codes("shared_helper_other_caller.py") == ["GG006"]


@pytest.mark.parametrize("flip", [False, True])
def test_a_step_on_one_arm_of_an_if_still_masks_a_retained_graph_wherever_the_paths_meet(flip: bool) -> None:
    source = _source("step_on_one_arm_before_join.py")
    if flip:
        lines = source.splitlines(keepends=True)
        start = next(i for i, line in enumerate(lines) if "if loss.item() > 1e3:" in line)
        body = lines[start + 1:start + 4]
        assert body[1].strip() == "else:"
        swapped = [lines[start].replace("> 1e3", "<= 1e3"), lines[start + 3], body[1], body[0]]
        source = "".join(lines[:start] + swapped + lines[start + 4:])
    assert [d.code for d in analyze(source)] == ["GG006"]


@pytest.mark.parametrize("name", ["write_through_alias.py", "write_in_resetting_helper.py"])
def test_no_clone_is_offered_where_the_in_place_write_is_meant_to_change_another_name_s_tensor(name: str) -> None:
    found = analyze(_source(name))
    assert [d.code for d in found] == ["GG011"]
    fixed, _ = fix_text_round(_source(name), choose_fixes(found, unsafe=True))
    assert ".clone()" not in fixed


def test_a_backward_on_the_line_of_its_if_gets_no_edit_that_would_run_every_iteration() -> None:
    found = analyze(_source("one_line_periodic_backward.py"))
    assert [d.code for d in found] == ["GG003"]
    fixed, _ = fix_text_round(_source("one_line_periodic_backward.py"), choose_fixes(found, unsafe=True))
    assert "losses.clear()" not in fixed.split("if (step + 1) % 4 == 0: torch.stack")[1].splitlines()[1]


def test_state_updated_from_itself_in_one_line_arms_is_carried_state_and_detached(fixed_runs: dict) -> None:
    found = analyze(_source("one_line_arms_carry_state.py"))
    assert [d.code for d in found] == ["GG003"]
    fixed, _ = fix_text_round(_source("one_line_arms_carry_state.py"), choose_fixes(found, unsafe=False))
    assert fixed.index("h = h.detach()") < fixed.index("if step % 2 == 0: h = net(h)")
    run = fixed_runs["one_line_arms_carry_state.py"]
    assert run.error_type is None, run.stderr


def test_a_constructor_s_parameter_is_not_read_through_an_attribute_the_constructor_rebinds() -> None:
    source = _source("attribute_rebound_later.py")
    found = analyze(source)
    fixed, _ = fix_text_round(source, choose_fixes(found, unsafe=True))
    assert "self.net.prototypes()" not in fixed


@pytest.mark.parametrize("made_by", ["constructor", "factory"])
def test_recomputing_a_loss_keeps_the_model_and_the_data_it_was_computed_from(made_by: str) -> None:
    # `net = nn.Linear(...)` and `x = torch.randn(...)` are what the loss runs on: made again in the
    # loop, the model would start over every step (and leave its optimizer) and the data would change.
    # The same when a helper of the program builds the model (`net = build()`).
    source = _source("loss_built_once_before_loop.py")
    if made_by == "factory":
        source = source.replace("net = nn.Linear(4, 1)\n",
                                "def build():\n    return nn.Linear(4, 1)\n\n\nnet = build()\n")
        assert "net = build()" in source
    found = analyze(source)
    assert [d.code for d in found] == ["GG001"]
    fixed, _ = fix_text_round(source, choose_fixes(found, unsafe=True))
    loop = fixed[fixed.index("for step in range(20):"):]
    assert "loss = net(x).pow(2).mean()" in loop
    assert "nn.Linear" not in loop and "build()" not in loop and "torch.randn" not in loop


def test_a_critic_stepped_by_hand_is_trained_and_its_score_is_computed_again_after_the_step(
        fixed_runs: dict) -> None:
    # `p.sub_(lr * p.grad)` under no_grad is the critic's optimizer: computing `d_out` without a graph
    # (as for a target network blended in place) would stop both networks' training.
    source = _source("critic_stepped_by_hand.py")
    found = analyze(source)
    assert [d.code for d in found] == ["GG011"]
    fixed, _ = fix_text_round(source, choose_fixes(found, unsafe=True))
    assert "no_grad():\n        d_out" not in fixed
    after = fixed[fixed.index("p.clamp_(-0.01, 0.01)"):]
    assert "d_out = D(fake)" in after.split("g_loss = -d_out.mean()")[0]
    run = fixed_runs["critic_stepped_by_hand.py"]
    assert run.error_type is None, run.stderr


def _layout(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")


def test_a_package_the_file_lies_in_is_found_above_it_without_project_markers(tmp_path: Path) -> None:
    from gradguard.analysis.reach import locate, project_roots

    # `agents/actor_critic_agents/SAC.py` importing `agents.Base_Agent`, in a copy with no `.git`.
    _layout(tmp_path, ["agents/Base_Agent.py", "agents/actor_critic_agents/SAC.py"])
    script = str(tmp_path / "agents/actor_critic_agents/SAC.py")
    assert locate(script, project_roots(script), "agents.Base_Agent") == str(tmp_path / "agents/Base_Agent.py")


def test_a_folder_inside_another_package_is_not_taken_for_a_library_of_its_name(tmp_path: Path) -> None:
    from gradguard.analysis.reach import locate, project_roots

    # `proj/data/datasets/cifar.py` importing Hugging Face's `datasets`: `data.datasets` is no `datasets`.
    _layout(tmp_path, ["proj/data/__init__.py", "proj/data/datasets/__init__.py", "proj/data/datasets/cifar.py"])
    script = str(tmp_path / "proj/data/datasets/cifar.py")
    assert locate(script, project_roots(script), "datasets") is None


def test_a_renamed_parameter_keeps_the_keyword_it_is_passed_by() -> None:
    import libcst as cst

    from gradguard.codemods import renamed

    statement = cst.parse_statement("self.protos = prototypes_of(net=net)\n")
    assert cst.Module(body=[renamed(statement, "net", "self.net")]).code == \
        "self.protos = prototypes_of(net=self.net)\n"
