"""Shapes taken from real code: gradguard run over torch 2.13, transformers 5.25.0, lightning 2.6.6,
accelerate 1.16.0 and diffusers 0.42.1 (`python bench/bench_lint.py --findings ...`).

Each false positive found there is reduced to a small program of the same shape, asserted clean; each
true finding is asserted flagged. The comment above each shape names where it comes from; a correct
shape carries the reason it is correct, shown if gradguard flags it again. A true finding gradguard
still misses is a strict xfail saying why.
"""

from __future__ import annotations

from textwrap import dedent

import pytest

from gradguard.analysis import analyze


def _fp(name: str, source: str, reason: str) -> object:
    """A correct program that gradguard once flagged; `reason` says why it is correct."""
    return pytest.param(dedent(source), reason, id=name)


CORRECT_SHAPES = [
    # accelerate/test_utils/scripts/test_sync.py:174,182,196 (GG010, GG001, GG001).
    _fp(
        "independent-losses-kept-then-backwarded-one-by-one",
        """\
        import torch.nn.functional as F


        def sync_multiple_forwards(ddp_model, batches, accelerator):
            ddp_model.train()
            losses = []
            for ddp_input, ddp_target in batches:
                ddp_output = ddp_model(ddp_input)
                loss = F.mse_loss(ddp_output, ddp_target)
                losses.append(loss)
            for iteration in range(len(losses)):
                loss = losses[iteration]
                accelerator.backward(loss)
        """,
        "each list element is its own forward's graph: `losses[iteration]` differs per iteration (GG001 "
        "merges the elements), and the list is kept to be backward-ed, not for logging (GG010)",
    ),
    # accelerate/test_utils/scripts/external_deps/test_checkpointing.py:204, test_peak_memory_usage.py:182,
    # test_performance.py:168 (GG002 "shared through `train_dataloader`"). With `torch.optim.AdamW`
    # written out it is not flagged: the optimizer class chosen at run time is what misleads the model.
    _fp(
        "optimizer-class-chosen-at-run-time-then-accelerator-prepare",
        """\
        import torch
        from accelerate import Accelerator
        from accelerate.utils import DummyOptim


        def training_function(model, make_dataloader, num_epochs, use_deepspeed):
            accelerator = Accelerator()
            train_dataloader = make_dataloader(accelerator)
            optimizer_cls = DummyOptim if use_deepspeed else torch.optim.AdamW
            optimizer = optimizer_cls(params=model.parameters(), lr=1e-3)
            model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
            for epoch in range(num_epochs):
                for batch in train_dataloader:
                    outputs = model(**batch)
                    accelerator.backward(outputs.loss)
                    optimizer.step()
                    optimizer.zero_grad()
        """,
        "an optimizer built by an unknown class from `model.parameters()` is taken for a graph, and "
        "`accelerator.prepare` spreads it to the model and the dataloader; none of them is a graph, and "
        "each batch is fresh",
    ),
    # transformers/trainer.py:2163 (GG002 "shared through `self.model`"). The real finding goes away when
    # `optimizer_cls(...)` in create_optimizer is replaced by `torch.optim.AdamW(...)`; this reduction of
    # the same cause is reported as GG006 today.
    _fp(
        "trainer-model-prepared-with-an-optimizer-of-unknown-class",
        """\
        from accelerate import Accelerator


        class Trainer:
            def __init__(self, model, optimizer_cls):
                self.model = model
                self.optimizer = optimizer_cls(self.model.parameters(), lr=1e-3)
                self.accelerator = Accelerator()

            def get_tp_size(self):
                return getattr(self.model, "_tp_size", 1)

            def compute_loss(self, model, inputs):
                loss = model(**inputs)["loss"]
                return loss * self.get_tp_size()

            def training_step(self, model, inputs):
                loss = self.compute_loss(model, inputs)
                self.accelerator.backward(loss)
                return loss.detach()

            def train(self, batches):
                model, self.optimizer = self.accelerator.prepare(self.model, self.optimizer)
                self.model = model
                for inputs in batches:
                    self.training_step(model, inputs)
                    self.optimizer.step()
                    self.optimizer.zero_grad()
        """,
        "the optimizer of unknown class makes `accelerator.prepare`'s model (then `self.model`, then "
        "`getattr(self.model, ...)`) look like a graph built once; each step's loss is fresh",
    ),
    # torch/autograd/functional.py:196 (GG010), same family as :263 `res += (grads_i,)`.
    _fp(
        "grad-outputs-tuple-built-for-autograd-grad",
        """\
        import torch


        def _autograd_grad(outputs, inputs, grad_outputs, create_graph=False):
            new_outputs = ()
            new_grad_outputs = ()
            for out, grad_out in zip(outputs, grad_outputs):
                if out is not None and out.requires_grad:
                    new_outputs += (out,)
                    new_grad_outputs += (grad_out,)
            return torch.autograd.grad(new_outputs, inputs, new_grad_outputs, allow_unused=True,
                                       create_graph=create_graph)


        def jvp(func, inputs, v):
            with torch.enable_grad():
                outputs = func(*inputs)
                grad_outputs = tuple(torch.zeros_like(out, requires_grad=True) for out in outputs)
                grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
            return _autograd_grad(grad_inputs, grad_outputs, v)
        """,
        "the tuple is the argument of the very next autograd.grad call, not a log kept across a "
        "training loop (there is no training loop)",
    ),
    # torch/autograd/functional.py:789,790 (GG010).
    _fp(
        "jacobian-split-into-result-lists",
        """\
        import torch


        def jacobian(func, inputs):
            outputs = func(*inputs)
            flat = torch.cat([out.reshape(-1) for out in outputs])
            grads = torch.autograd.grad(flat.sum(), inputs, create_graph=True)
            jacobian_input_output = []
            for jac_input_i, input_i in zip(grads, inputs):
                jacobian_input_i_output = []
                for jac, output_j in zip(jac_input_i.split(1, dim=0), outputs):
                    jacobian_input_i_output.append(jac.view(output_j.shape + input_i.shape))
                jacobian_input_output.append(jacobian_input_i_output)
            return jacobian_input_output
        """,
        "the lists are the function's result (returned), built in a loop over outputs, not a training "
        "loop; with create_graph=True the graph is wanted by the caller",
    ),
    # torch/autograd/gradcheck.py:715,716,839,841,842,1859,1861,1863,1864 (GG010): every one disappears
    # when the comprehension variable `x` of gradgradcheck's `x.requires_grad_() ... for i, x in ...` is
    # renamed, so the fact "x requires grad" leaks out of that comprehension into other functions' `x`.
    _fp(
        "comprehension-variable-leaks-requires-grad-into-other-functions",
        """\
        import torch


        def vec_like(x, generator):
            if x.layout == torch.sparse_coo:
                values = torch.rand(x._values().numel(), generator=generator)
                return torch.sparse_coo_tensor(x._indices(), values, x.size())
            return torch.rand(x.numel(), generator=generator)


        def make_vectors(inputs):
            generator = torch.Generator()
            all_u = []
            for inp in inputs:
                all_u.append(vec_like(inp, generator))
            return all_u


        def grad_of_grad(outputs, inputs, args):
            grad_outputs = tuple(x.requires_grad_() for x in args)
            return torch.autograd.grad(outputs, inputs, grad_outputs, create_graph=True)
        """,
        "`x.requires_grad_()` inside grad_of_grad's generator expression makes vec_like's parameter `x` "
        "(another scope) look like a grad tensor; renaming the comprehension variable silences it",
    ),
    # torch/distributions/exp_family.py:65 and torch/distributions/kl.py:296 (GG010).
    _fp(
        "entropy-accumulated-into-returned-result",
        """\
        import torch


        def bregman_entropy(natural_params, log_normalizer, mean_carrier_measure):
            result = -mean_carrier_measure
            nparams = [p.detach().requires_grad_() for p in natural_params]
            lg_normal = log_normalizer(*nparams)
            gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
            result += lg_normal
            for np, g in zip(nparams, gradients):
                result -= (np * g).sum(-1)
            return result
        """,
        "`result` is the value the function computes and returns (differentiable on purpose), summed "
        "over the parameters, not a loss logged across training iterations",
    ),
    # torch/testing/_internal/common_utils.py:5851 (GG009 "in a loop, so memory grows").
    _fp(
        "retain-graph-over-several-outputs-of-one-call",
        """\
        import torch
        from torch.utils import _pytree as pytree


        def outs_and_grads(fn, graph_inps, inps):
            outs = fn(*graph_inps)
            for out in pytree.tree_leaves(outs):
                if isinstance(out, torch.Tensor) and out.requires_grad:
                    out.sum().backward(retain_graph=True)
            grads = [inp.grad for inp in pytree.tree_leaves(inps) if isinstance(inp, torch.Tensor)]
            return outs, grads
        """,
        "the outputs of one `fn(...)` call share its graph: the next iteration backward-s through it "
        "again, so retain_graph=True is needed (removing it raises the double-backward error)",
    ),
    # torch/testing/_internal/distributed/distributed_test.py:9564 (GG003).
    _fp(
        "module-class-defined-inside-the-test-function",
        """\
        import torch
        import torch.nn.functional as F
        from torch import nn
        from torch.nn.parallel import DistributedDataParallel


        def test_new_tensor_in_forward(rank):
            class MyModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(10, 10)

                def forward(self, x, opt_1):
                    if opt_1 is None:
                        opt_1 = torch.randn(1, 10)
                    return F.relu(self.fc1(x)), opt_1

            ddp = DistributedDataParallel(MyModel().to(rank), device_ids=[rank])
            opt = [None]
            for i in range(2):
                ddp.zero_grad()
                x = torch.randn(1, 10, device=rank)
                out, opt[0] = ddp(x, opt[0])
                out.mean().backward()
        """,
        "forward() returns `opt_1` untouched (a fresh randn) and `out` does not depend on it; the same "
        "class at module level is followed and not flagged, the class local to the function is not",
    ),
    # diffusers/models/attention_dispatch.py:2516,2517,2518 (GG010).
    _fp(
        "gradients-accumulated-in-autograd-function-backward",
        """\
        import torch


        def attention_backward_op(ctx, grad_out, query, key, value, out):
            with torch.enable_grad():
                return torch.autograd.grad(out, [query, key, value], grad_outputs=grad_out)


        class RingAttention(torch.autograd.Function):
            @staticmethod
            def forward(ctx, query, key, value, backward_op, world_size):
                out = torch.nn.functional.scaled_dot_product_attention(query, key, value)
                ctx.save_for_backward(query, key, value, out)
                ctx.backward_op = backward_op
                ctx.world_size = world_size
                return out

            @staticmethod
            def backward(ctx, grad_out):
                query, key, value, out = ctx.saved_tensors
                grad_query = torch.zeros_like(query)
                for i in range(ctx.world_size):
                    grad_query_op, grad_key_op, grad_value_op = ctx.backward_op(
                        ctx, grad_out, query, key, value, out
                    )
                    grad_query += grad_query_op
                return grad_query, None, None, None, None
        """,
        "an autograd.Function's backward runs with grad mode off (no graph is built) and the sum is the "
        "gradient it returns; nothing is logged",
    ),
    # diffusers/pipelines/deprecated/stable_diffusion_attend_and_excite/...attend_and_excite.py:993 (GG010).
    _fp(
        "latents-collected-then-concatenated",
        """\
        import torch


        def update_latent(latents, loss, step_size):
            grad_cond = torch.autograd.grad(loss.requires_grad_(True), [latents])[0]
            return latents - step_size * grad_cond


        def denoise(unet, latents, timesteps, compute_loss, max_iter):
            for i, t in enumerate(timesteps):
                with torch.enable_grad():
                    latents = latents.clone().detach().requires_grad_(True)
                    updated_latents = []
                    for latent in latents:
                        latent = latent.unsqueeze(0)
                        loss = compute_loss(unet(latent, t))
                        if i < max_iter:
                            latent = update_latent(latent, loss, 0.1)
                        updated_latents.append(latent)
                    latents = torch.cat(updated_latents, dim=0)
            return latents
        """,
        "the list is rebuilt every step and consumed at once by torch.cat: it is the next latents, not a log",
    ),
    # accelerate/accelerator.py:3618 (GG010).
    _fp(
        "state-dicts-collected-for-saving",
        """\
        import torch


        class Checkpointer:
            def __init__(self, models, sharded=False):
                self._models = models
                self.sharded = sharded

            def backward(self, loss):
                loss.backward()

            def get_state_dict(self, model):
                if self.sharded:
                    state_dict = model._consolidated_16bit_state_dict()
                else:
                    state_dict = model.state_dict()
                return state_dict

            def save_state(self, path):
                weights = []
                for model in self._models:
                    weights.append(self.get_state_dict(model))
                torch.save(weights, path)
        """,
        "an unknown method of a module (`_consolidated_16bit_state_dict`) is taken for a forward call; "
        "state dicts carry no graph, and a save loop is no training loop",
    ),
    # accelerate/accelerator.py:1717 (GG010).
    _fp(
        "parameter-names-collected",
        """\
        import torch
        from accelerate.utils import fsdp2_canonicalize_names
        from accelerate.utils.modeling import _get_parameter_id


        def named_parameter_ids(*models):
            named_parameters = {}
            for model in models:
                for name, param in model.named_parameters():
                    named_parameters[name] = _get_parameter_id(param)
            return named_parameters


        def missing_parameters(old_models, new_models):
            old_named_params = fsdp2_canonicalize_names(named_parameter_ids(*old_models))
            new_named_params = fsdp2_canonicalize_names(named_parameter_ids(*new_models))
            missing_params = []
            for n, p in old_named_params.items():
                if n not in new_named_params:
                    missing_params.append(n)
            return missing_params


        def backward(loss):
            loss.backward()
        """,
        "`n` is a key of the dict (a parameter name, a str), not one of its values",
    ),
]


@pytest.mark.parametrize(("source", "reason"), CORRECT_SHAPES)
def test_correct_real_world_shape_is_not_flagged(source: str, reason: str) -> None:
    assert analyze(source) == (), reason


# transformers/models/reformer/modeling_reformer.py:1613,1635 (GG009): the reversible block's backward
# pass recomputes f and g from fresh leaves and backward-s each graph once; nothing backward-s either
# graph again, so both retain_graph=True are needless (lucidrains' reversible.py, which the code
# follows, has none). In the real file only 1635 is flagged: `self.feed_forward` there goes through
# `apply_chunking_to_forward`, whose result gradguard does not assume to be a graph.
REVERSIBLE_BACKWARD = dedent(
    """\
    import torch
    from torch import nn


    class ReversibleLayer(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.attention = nn.Linear(dim, dim)
            self.feed_forward = nn.Linear(dim, dim)

        def backward_pass(self, next_attn_output, hidden_states, grad_attn_output, grad_hidden_states):
            with torch.enable_grad():
                next_attn_output.requires_grad = True
                res_hidden_states = self.feed_forward(next_attn_output)
                res_hidden_states.backward(grad_hidden_states, retain_graph=True)
            with torch.no_grad():
                hidden_states = hidden_states - res_hidden_states
                del res_hidden_states
                grad_attn_output = grad_attn_output + next_attn_output.grad
                next_attn_output.grad = None
            with torch.enable_grad():
                hidden_states.requires_grad = True
                output = self.attention(hidden_states)
                output.backward(grad_attn_output, retain_graph=True)
            with torch.no_grad():
                attn_output = next_attn_output - output
                grad_hidden_states = grad_hidden_states + hidden_states.grad
                hidden_states = hidden_states.detach()
            return attn_output, hidden_states, grad_attn_output, grad_hidden_states
    """
)

# torch/_inductor/fx_passes/numeric_utils.py:151,152 (GG009): two separate forwards per iteration, each
# backward-ed once; both retain_graph=True are needless. In the real code the models are parameters of
# the function (callables gradguard knows nothing of); here they are modules.
NUMERIC_CHECK_LOOP = dedent(
    """\
    import torch
    from torch import nn


    def run_model(model_input, num_iterations=10):
        model_base = nn.Linear(4, 2)
        model_control = nn.Linear(4, 2)
        for i in range(num_iterations):
            pred_base = model_base(*model_input)
            pred_control = model_control(*model_input)
            try:
                _ = pred_base[0].sum().backward(retain_graph=True)
                _ = pred_control[0].sum().backward(retain_graph=True)
            except Exception:
                pass
    """
)

# The real shape of numeric_utils.py: the models arrive as arguments.
NUMERIC_CHECK_LOOP_WITH_MODEL_ARGUMENTS = dedent(
    """\
    import torch


    def run_model(model_base, model_control, model_input, num_iterations=10):
        for i in range(num_iterations):
            pred_base = model_base(*model_input)
            pred_control = model_control(*model_input)
            try:
                _ = pred_base[0].sum().backward(retain_graph=True)
                _ = pred_control[0].sum().backward(retain_graph=True)
            except Exception:
                pass
    """
)


def _found(source: str) -> list[tuple[int, str]]:
    return [(d.span.start.row, d.code) for d in analyze(source)]


def test_needless_retain_graph_in_a_reversible_backward_is_flagged() -> None:
    assert _found(REVERSIBLE_BACKWARD) == [(15, "GG009"), (24, "GG009")]


def test_needless_retain_graph_in_a_numeric_check_loop_is_flagged() -> None:
    assert _found(NUMERIC_CHECK_LOOP) == [(12, "GG009"), (13, "GG009")]


def test_needless_retain_graph_on_outputs_of_model_arguments_is_flagged() -> None:
    assert _found(NUMERIC_CHECK_LOOP_WITH_MODEL_ARGUMENTS) == [(9, "GG009"), (10, "GG009")]


def test_needless_retain_graph_message_does_not_claim_growth_when_the_root_is_rebound() -> None:
    # `pred_base` is rebound each iteration, which frees the retained graph: peak memory holds two
    # iterations' activations, it does not grow (an earlier message claimed it did).
    messages = [d.message for d in analyze(NUMERIC_CHECK_LOOP)]
    assert messages
    assert not any("grows" in message for message in messages)


def test_data_sampled_by_a_model_of_unseen_class_is_no_evidence_of_a_graph() -> None:
    """textbox's GAN trainers: `fake_data = self.model.sample(n)` (a generator whose class the file
    does not see, sampling token ids under no_grad) batched by a DataLoader and read every
    discriminator step. Nothing says the samples carry a graph: no finding."""
    source = dedent("""\
        import torch
        from torch.utils.data import DataLoader


        class Trainer:
            def __init__(self, model):
                self.model = model
                self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

            def train_discriminator(self, real_dataloader, epochs):
                fake_data = self.model.sample(512)
                fake_dataloader = DataLoader(fake_data, batch_size=64, shuffle=True)
                for epoch in range(epochs):
                    for real, fake in zip(real_dataloader, fake_dataloader):
                        loss = self.model.calculate_d_train_loss(real, fake)
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()
    """)
    assert [d.code for d in analyze(source)] == []


def test_a_tensor_stored_into_a_numpy_buffer_is_a_number_there() -> None:
    """cleanrl's PPO at the fix commit: `logprobs = np.zeros(n)`, `logprobs[step] = logprob` during
    the rollout, read back through `torch.Tensor(logprobs)` in every update epoch. numpy converts
    what it stores: no graph rides along, no finding (a torch buffer, `torch.zeros(n)`, keeps it)."""
    source = dedent("""\
        import numpy as np
        import torch
        import torch.nn as nn

        pg = nn.Linear(4, 2)
        optimizer = torch.optim.Adam(pg.parameters(), lr=1e-3)
        for update in range(3):
            logprobs = {buffer}
            for step in range(8):
                logits = pg(torch.randn(1, 4))
                logprobs[step] = torch.log_softmax(logits, -1)[0, 0]
            for epoch in range(4):
                new = torch.log_softmax(pg(torch.randn(8, 4)), -1)[:, 0]
                loss = -(torch.exp(new - torch.Tensor(logprobs))).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """)
    assert [d.code for d in analyze(source.format(buffer="np.zeros((8,))"))] == []
    assert [d.code for d in analyze(source.format(buffer="torch.zeros((8,))")) if d.severity.name == "ERROR"] != []
