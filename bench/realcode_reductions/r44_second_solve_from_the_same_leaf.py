"""Two adaptive ODE solves from the same leaf `x`, each followed by `autograd.grad(sol[-1].sum(), x)`.

Model believed: the second `autograd.grad` goes through the graph of `sol` that the first one freed
(GG007, "it ran without `retain_graph` or `create_graph`"). Each `odeint` call builds its own
graph from the leaf `x`: the second solve shares no node with the first, and the first
`autograd.grad` frees only its own. Runs fine. As in r43, the model goes wrong only with the
solver's dense-output branch present though never taken (`interpolator` is None; `if False:`
keeps the finding, deleting the block removes it), and here also only with the solver's
`x, t_span = solver.sync_device_dtype(x, t_span)`, a method that hands its arguments back
(without that call, or with a single solve, nothing is reported).
Reduces DiffEqML/torchdyn (95cc74b0e35330b03d2cd4d875df362a93e1b5ea)
benchmarks/numerics/bench_odeint.ipynb cell 19, line 2 (GG007, the freeing grad at cell 15,
line 2): `x = torch.randn(1024, 2, requires_grad=True)` (cell 11), `prob.odeint(x, t_span)` of an
adjoint `ODEProblem` then `torch.autograd.grad(sol_torchdyn[-1].sum(), x)` (cells 14-15), the same
with a new interpolated-adjoint `ODEProblem` (cells 18-19); the notebook's saved outputs show both
cells ran. It stays with both problems `sensitivity='autograd'`, with `torchdyn.numerics.odeint`
called directly, and in the sources cut down to one 328-line file, where it goes when the
`sync_device_dtype` call or the interpolation block (torchdyn/numerics/odeint.py:377-387) is removed.
"""
import torch
import torch.nn as nn


class HeunEuler(nn.Module):
    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.order, self.dtype = 2, dtype
        self.min_factor, self.max_factor, self.safety = torch.tensor([0.2]), torch.tensor([10.0]), torch.tensor([0.9])

    def sync_device_dtype(self, x, t_span):
        device = x.device
        t_span = t_span.to(device)
        self.safety = self.safety.to(device)
        self.min_factor = self.min_factor.to(device)
        self.max_factor = self.max_factor.to(device)
        return x, t_span

    def step(self, f, x, t, dt, k1=None):
        if k1 == None: k1 = f(t, x)
        k2 = f(t + dt, x + dt * k1)
        x_sol = x + dt * 0.5 * (k1 + k2)
        err = dt * 0.5 * (k2 - k1)
        return k2, x_sol, err, (k1, k2)


def hairer_norm(tensor):
    return tensor.abs().pow(2).mean().sqrt()


@torch.no_grad()
def adapt_step(dt, error_ratio, safety, min_factor, max_factor, order):
    if error_ratio == 0: return dt * max_factor
    if error_ratio < 1: min_factor = torch.ones_like(dt)
    exponent = torch.tensor(order, dtype=dt.dtype, device=dt.device).reciprocal()
    factor = torch.min(max_factor, torch.max(safety / error_ratio ** exponent, min_factor))
    return dt * factor


def _adaptive_odeint(f, k1, x, dt, t_span, solver, atol=1e-4, rtol=1e-4, interpolator=None):
    t_eval, t, T = t_span[1:], t_span[:1], t_span[-1]
    ckpt_counter = 0
    eval_times, sol = [t], [x]
    while t < T:
        if t + dt > T:
            dt = T - t
        f_new, x_new, x_err, stages = solver.step(f, x, t, dt, k1=k1)
        error_ratio = hairer_norm(x_err / (atol + rtol * torch.max(x.abs(), x_new.abs())))
        if error_ratio <= 1:
            # dense output at the requested times, when an interpolator is given
            if t_eval is not None and interpolator is not None:
                coefs = None
                while (ckpt_counter < len(t_eval)) and (t + dt > t_eval[ckpt_counter]):
                    x_mid = x + dt * sum([interpolator.bmid[i] * stages[i] for i in range(len(stages))])
                    if coefs == None: coefs = interpolator.fit(dt, k1, f_new, x, x_new, x_mid)
                    sol.append(interpolator.evaluate(coefs, t, t + dt, t_eval[ckpt_counter]))
                    eval_times.append(t_eval[ckpt_counter][None])
                    ckpt_counter += 1
            if t + dt == t_eval[ckpt_counter]:
                sol.append(x_new)
                eval_times.append(t + dt)
                ckpt_counter += 1
            t, x = t + dt, x_new
            k1 = f_new
        dt = adapt_step(dt, error_ratio, solver.safety, solver.min_factor, solver.max_factor, solver.order)
    return torch.cat(eval_times), torch.stack(sol)


def odeint(f, x, t_span, solver, atol=1e-3, rtol=1e-3, interpolator=None):
    if type(solver) == str:
        solver = {"heun": HeunEuler}[solver](x.dtype)
    x, t_span = solver.sync_device_dtype(x, t_span)
    t = t_span[0]
    k1 = f(t, x)
    dt = torch.tensor(0.01)
    return _adaptive_odeint(f, k1, x, dt, t_span, solver, atol, rtol, interpolator)


class VanDerPol(nn.Module):
    def __init__(self, alpha=10):
        super().__init__()
        self.alpha = alpha
        self.nfe = 0

    def forward(self, t, x):
        self.nfe += 1
        x1, x2 = x[..., :1], x[..., 1:2]
        return torch.cat([x2, self.alpha * (1 - x1 ** 2) * x2 - x1], -1)


f = VanDerPol(0.5)
t_span = torch.linspace(0, 2, 30)
x = torch.randn(64, 2, requires_grad=True)

# gradient of the final state w.r.t. the initial state, at two tolerances
t_eval, sol = odeint(f, x, t_span, "heun", atol=1e-3, rtol=1e-3)
grad1 = torch.autograd.grad(sol[-1].sum(), x)[0]

t_eval, sol = odeint(f, x, t_span, "heun", atol=1e-4, rtol=1e-4)
grad2 = torch.autograd.grad(sol[-1].sum(), x)[0]
print("ok", grad1.norm().item(), grad2.norm().item())
