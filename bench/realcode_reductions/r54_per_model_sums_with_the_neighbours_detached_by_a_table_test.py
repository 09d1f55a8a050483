"""FBPINNs: one loss and one optimizer step per subdomain model, each from a list built by a helper.

Model believed: "`yjs_sum` was computed once from tensors that require grad; the backward at line
... freed its graph, and this iteration uses it again" (GG006 at `loss.backward()`). `forward_step`
runs every model once and builds, per active model `im`, the sum over its segments of the
overlapping models' windowed outputs: model `im`'s own output with its graph, the neighbours'
outputs detached (`if im2 == im: ... else: ... .detach()`). So `yjs_sum[i1]` holds the graph of
model `im` alone, the loop backward-s each model's graph once and steps only that model, and the
next step makes a fresh forward. Runs fine. Simpler forms are clean (a list of per-model outputs
indexed by the loop, or `outs[j] if j == im else outs[j].detach()` over `range`); this one is
flagged also with `yjs[im2]` for `yjs[j1]`, so what the model cannot follow seems to be which
element of `yjs` stays attached when the test `im2 == im` reads a table of overlaps (`D.s`, built
by a comprehension). Reduces i207M/PINNacle (6f8d69c9c84c41d19644e4ceebdc64c4a11d3adf)
fbpinns/main.py:267 (GG006), `FBPINNTrainer._train_step` and its nested `forward_step` (a copy of
benmoseley's FBPINNs; the physics loss here is a toy ODE residual through `autograd.grad(...,
create_graph=True)`, the boundary and data losses are left out).
"""
import torch
import torch.nn as nn


class Domain:
    def __init__(self, n_models=3):
        self.active_ims = [(im, im) for im in range(n_models)]
        self.active_fixed_neighbours_ims = [(im, im) for im in range(n_models)]
        self.m = {im: [im, im + 1] for im in range(n_models)}          # segments of each model
        self.s = {iseg: [(im, im, 0, 8) for im in range(n_models) if iseg in (im, im + 1)]
                  for iseg in range(n_models + 1)}                   # models overlapping each segment


def get_gradients(x, y):
    j = torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)[0]
    return y, j


class Trainer:
    def _train_step(self, models, optimizers, D, in_segments):
        def forward_step(in_segments):
            xs, yjs = [], []
            for im, _ in D.active_fixed_neighbours_ims:
                x = torch.cat([in_segments[iseg] for iseg in D.m[im]], dim=0).detach().clone().requires_grad_(True)
                y = models[im](x)
                yj = get_gradients(x, y)
                yjs.append(yj)
                xs.append(x)
            yjs_sum = []
            for im, i1 in D.active_ims:
                yjs_segs = []
                for k, iseg in enumerate(D.m[im]):
                    yjs_seg = []
                    for im2, j1, j2, j3 in D.s[iseg]:
                        start_idx, end_idx = (j2, j3) if im2 != im else (8 * k, 8 * k + 8)
                        yj = yjs[j1]
                        if im2 == im: yj = [t[start_idx:end_idx] for t in yj]
                        else:         yj = [t[start_idx:end_idx].detach() for t in yj]
                        yjs_seg.append(yj)
                    yj_seg = [torch.sum(torch.stack(ts, -1), -1) for ts in zip(*yjs_seg)]
                    yjs_segs.append(yj_seg)
                yj = [torch.cat(ts) for ts in zip(*yjs_segs)]
                yjs_sum.append(yj)
            return xs, yjs_sum, yjs

        for optimizer in optimizers: optimizer.zero_grad()
        xs, yjs_sum, yjs = forward_step(in_segments)
        for im, i1 in D.active_ims:
            x, yj = xs[i1], yjs_sum[i1]
            loss_physics = ((yj[1] - torch.cos(x[:len(yj[1])])) ** 2).mean()
            loss = loss_physics
            loss.backward()
            optimizers[im].step()
        return [t.detach() for t in xs], loss.item()


if __name__ == "__main__":
    D = Domain()
    models = [nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1)) for _ in range(3)]
    optimizers = [torch.optim.Adam(m.parameters(), 1e-3) for m in models]
    trainer = Trainer()
    for i in range(3):
        segments = [torch.rand(8, 1) + iseg for iseg in range(4)]
        trainer._train_step(models, optimizers, D, segments)
    print("ok")
