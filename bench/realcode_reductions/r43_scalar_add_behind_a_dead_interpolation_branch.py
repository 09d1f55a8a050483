"""An adaptive ODE solve from a fixed initial state `x = leaf + 0.5`, once per step of a loop that learns T.

Model believed: `x`, computed once before the loop from a tensor that requires grad, is a graph
that the first `loss.backward()` frees and every later iteration backpropagates through again
(GG006 on the backward, GG002 on the final `autograd.grad`, "they share through `sol`", the solver's
list that starts as `[x]`). The only node between `x` and its leaf is the addition of a Python
scalar, which saves no tensor: backward goes through it any number of times (with `* 2.0` or
`.exp()` instead, it would be a true error, and gradguard reports that too). Everything else is
rebuilt at each call. Runs fine. What the model needs to go wrong is the dense-output branch of the
solver, never taken (`interpolator` is None; written `if False:` the findings stay): without that
branch, or with `x` a leaf, or `x` not requiring grad, nothing is reported.
Reduces DiffEqML/torchdyn (95cc74b0e35330b03d2cd4d875df362a93e1b5ea)
benchmarks/gradcheck_tspan.ipynb cell 13, line 13 (GG006, naming `eval_times`) and cell 15, line 6
(GG002, "through `sol`"): `x = torch.zeros(1, 1, requires_grad=True) + 0.5`, then
`prob(x, t_span)` of an `ODEProblem(f, solver='dopri5', sensitivity='adjoint')` 1,000 times with
`loss.backward(); opt.step()` (the notebook's saved output shows the run finished), whose
`torchdyn/numerics/odeint.py:_adaptive_odeint` holds that `interpolator` branch (lines 377-387).
The same report comes with the repository's sources cut down to the adaptive path alone (a
233-line single file of `odeint`, `_adaptive_odeint`, `init_step`, `adapt_step` and
`DormandPrince45`), and goes when the interpolation block is deleted from it.
"""
import torch
import torch.nn as nn


def hairer_norm(tensor):
    return tensor.abs().pow(2).mean().sqrt()


@torch.no_grad()
def adapt_step(dt, error_ratio, safety, min_factor, max_factor, order):
    if error_ratio == 0:
        return dt * max_factor
    if error_ratio < 1:
        min_factor = torch.ones_like(dt)
    exponent = torch.tensor(order, dtype=dt.dtype, device=dt.device).reciprocal()
    factor = torch.min(max_factor, torch.max(safety / error_ratio ** exponent, min_factor))
    return dt * factor


class HeunEuler(nn.Module):
    """Embedded Heun (order 2) / Euler pair."""

    def __init__(self):
        super().__init__()
        self.order = 2
        self.safety, self.min_factor, self.max_factor = torch.tensor([0.9]), torch.tensor([0.2]), torch.tensor([10.0])

    def step(self, f, x, t, dt, k1=None):
        if k1 is None:
            k1 = f(t, x)
        k2 = f(t + dt, x + dt * k1)
        x_sol = x + dt * 0.5 * (k1 + k2)
        x_err = dt * 0.5 * (k2 - k1)
        return k2, x_sol, x_err


def adaptive_odeint(f, k1, x, dt, t_span, solver, atol=1e-4, rtol=1e-4, interpolator=None):
    t_eval, t, T = t_span[1:], t_span[:1], t_span[-1]
    ckpt_counter, ckpt_flag = 0, False
    eval_times, sol = [t], [x]
    while t < T:
        if t + dt > T:
            dt = T - t
        if (ckpt_counter < len(t_eval)) and (t + dt > t_eval[ckpt_counter]):
            dt_old, ckpt_flag = dt, True
            dt = t_eval[ckpt_counter] - t
        f_new, x_new, x_err = solver.step(f, x, t, dt, k1=k1)
        error_ratio = hairer_norm(x_err / (atol + rtol * torch.max(x.abs(), x_new.abs())))
        if error_ratio <= 1:
            if t_eval is not None and interpolator is not None:
                coefs = None
                while (ckpt_counter < len(t_eval)) and (t + dt > t_eval[ckpt_counter]):
                    if coefs == None: coefs = interpolator.fit(dt, k1, f_new, x, x_new)
                    sol.append(interpolator.evaluate(coefs, t, t + dt, t_eval[ckpt_counter]))
                    eval_times.append(t_eval[ckpt_counter][None])
                    ckpt_counter += 1
            if t + dt == t_eval[ckpt_counter]:
                sol.append(x_new)
                eval_times.append(t + dt)
                ckpt_counter += 1
            t, x = t + dt, x_new
            k1 = f_new
        if ckpt_flag:
            dt = dt_old - dt
            ckpt_flag = False
        dt = adapt_step(dt, error_ratio, solver.safety, solver.min_factor, solver.max_factor, solver.order)
    return torch.cat(eval_times), torch.stack(sol)


def odeint(f, x, t_span, solver, atol=1e-4, rtol=1e-4, interpolator=None):
    t = t_span[0]
    k1 = f(t, x)
    dt = torch.tensor([0.05])
    return adaptive_odeint(f, k1, x, dt, t_span, solver, atol, rtol, interpolator)


net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1), nn.Softplus())
f = lambda t, x: net(x)
solver = HeunEuler()

# learn the end time T so that x(T) hits a target
x = torch.zeros(1, 1, requires_grad=True) + 0.5
t0 = torch.zeros(1)
T = torch.ones(1).requires_grad_(True)
opt = torch.optim.Adam((T,), lr=1e-2)
for i in range(50):
    t_span = torch.cat([t0, T])
    t_eval, traj = odeint(f, x, t_span, solver)
    loss = ((traj[-1] - torch.tensor([2.0])) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()

t_span = torch.cat([t0, T])
t_eval, traj = odeint(f, x, t_span, solver)
l = ((traj[-1] - torch.tensor([5.0])) ** 2).mean()
dldt = torch.autograd.grad(l, T)[0]
print("ok", T.item(), dldt.item())
