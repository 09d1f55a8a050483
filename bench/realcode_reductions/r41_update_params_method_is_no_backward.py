"""A functional copy of an ensemble's particles, refreshed with `f_hyper_net.update_params(params=...)`.

Model believed: a method named `update_params`, called on an object the analysis cannot resolve
(here the patched copy comes from a factory the caller put in `model`), is a backward of its
receiver: "the backward at line 51 freed its graph" (GG006 on the `autograd.grad` at line 48,
GG001 on line 51 itself, "backward-ed again"). It only stores new tensors as the
fast weights; nothing is backward-ed there. Each inner step builds a fresh loss from the current
fast weights and takes `autograd.grad` of it (retain_graph=True); the meta-loss is backward-ed once
per task. Runs fine. Reduces cnguyen10/few_shot_meta_learning
(d797d9db0221e018f5f212d49f9f6cb4069827d4) Bmaml.py:41, :47 (GG006) and :60 (GG001), where
`f_hyper_net = higher.patch.monkeypatch(module=model["hyper_net"], ...)` and `update_params` is
higher's `_MonkeyPatchBase.update_params` (higher not installed; the same three findings appear with
`f_hyper_net = model["hyper_net"]`). Renaming the method to `set_params` makes them disappear; with a
positional argument (`update_params([...])`) the original reports GG003 instead.
"""
import torch


class FastEnsemble:
    """Functional copy of an ensemble of parameter vectors (particles), like higher's monkeypatch."""

    def __init__(self, particles):
        self.fast_params = [p for p in particles]

    def forward(self, i):
        return self.fast_params[i]

    def update_params(self, params):
        self.fast_params = list(params)


def base_net(x, w):
    return x @ w.view(4, 3)


class Bmaml:
    def __init__(self, num_models, num_inner, inner_lr):
        self.config = {"num_models": num_models, "num_inner_updates": num_inner, "inner_lr": inner_lr}

    def adaptation(self, x, y, model):
        f_hyper_net = model["make_patch"](model["particles"])
        q_params = torch.stack([p for p in model["particles"]])
        for _ in range(self.config["num_inner_updates"]):
            distance = torch.empty(self.config["num_models"], 12)
            for pid in range(self.config["num_models"]):
                w = f_hyper_net.forward(pid)
                loss_temp = torch.nn.functional.cross_entropy(base_net(x, w), y)
                grads = torch.autograd.grad(outputs=loss_temp, inputs=f_hyper_net.fast_params[pid], retain_graph=True)
                distance[pid, :] = grads[0]
            q_params = q_params - self.config["inner_lr"] * distance
            f_hyper_net.update_params(params=[q_params[i, :] for i in range(self.config["num_models"])])
        return f_hyper_net


def main():
    torch.manual_seed(0)
    particles = [torch.nn.Parameter(torch.randn(12) * 0.1) for _ in range(3)]
    model = {"particles": particles, "make_patch": FastEnsemble}
    opt = torch.optim.Adam(particles, lr=1e-2)
    learner = Bmaml(num_models=3, num_inner=2, inner_lr=0.1)
    for step in range(5):
        x_t, y_t = torch.randn(8, 4), torch.randint(0, 3, (8,))
        x_v, y_v = torch.randn(8, 4), torch.randint(0, 3, (8,))
        adapted = learner.adaptation(x_t, y_t, model)
        loss_v = sum(torch.nn.functional.cross_entropy(base_net(x_v, adapted.forward(i)), y_v) for i in range(3)) / 3
        loss_v.backward()
        opt.step()
        opt.zero_grad()
    print("ok", loss_v.item())


if __name__ == "__main__":
    main()
