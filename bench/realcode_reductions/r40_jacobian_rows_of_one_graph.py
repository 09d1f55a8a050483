"""A Jacobian built row by row: one autograd.grad per output column of the same `g`, create_graph=True.

Model believed: `g`, computed once before `for d in range(g.shape[1])`, is a stale pre-loop graph
that every iteration backpropagates through again, kept alive only by the `retain_graph=True`
that `create_graph=True` implies (GG006). It is the standard per-row Jacobian: each iteration
differentiates a different column of the same, fresh forward; no optimizer step happens between
them and the graph is built anew at every call. Runs fine. Reduces rtqichen/residual-flows
(8170138c850a3574319491d97093bc860ce4922d) train_toy.py:294 (GG006, reported there on the call
`visualize_transform(p_samples, ..., inverse_transform=density_fn, ...)` and naming `p_samples`,
the caller's first argument, for the callee's `g`): in eval mode `iResBlock._logdetgrad`
(resflows/layers/iresblock.py:81-95) takes the brute-force branch, whose `batch_jacobian`
(iresblock.py:172-176) is this loop. Here the finding lands on the loop itself (line 24). It needs
the visualization to sit in a branch of the training loop taken on some iterations only: with
`if True:` instead of `if itr == 1 or itr % 3 == 0:`, or without the training backward, it is gone.
"""
import numpy as np
import torch
import torch.nn as nn


def batch_jacobian(g, x):
    jac = []
    for d in range(g.shape[1]):
        jac.append(torch.autograd.grad(torch.sum(g[:, d]), x, create_graph=True)[0].view(x.shape[0], 1, x.shape[1]))
    return torch.cat(jac, 1)


class iResBlock(nn.Module):
    def __init__(self, nnet, brute_force=False):
        super().__init__()
        self.nnet = nnet
        self.brute_force = brute_force

    def forward(self, x, logpx):
        g, logdetgrad = self._logdetgrad(x)
        return x + g, logpx - logdetgrad

    def _logdetgrad(self, x):
        with torch.enable_grad():
            if self.brute_force or not self.training:
                x = x.requires_grad_(True)
                g = self.nnet(x)
                jac = batch_jacobian(g, x)
                dets = (jac[:, 0, 0] + 1) * (jac[:, 1, 1] + 1) - jac[:, 0, 1] * jac[:, 1, 0]
                return g, torch.log(torch.abs(dets)).view(-1, 1)
            x = x.requires_grad_(True)
            g = self.nnet(x)
            vjp = torch.autograd.grad(g, x, torch.randn_like(x), create_graph=True)[0]
            return g, (vjp * x).sum(1, keepdim=True)


class SequentialFlow(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.chain = nn.ModuleList(blocks)

    def forward(self, x, logpx):
        for i in range(len(self.chain)):
            x, logpx = self.chain[i](x, logpx)
        return x, logpx


def plt_flow_density(inverse_transform, npts=20, memory=10):
    x = torch.from_numpy(np.random.randn(npts * npts, 2)).type(torch.float32)
    zeros = torch.zeros(x.shape[0], 1).to(x)
    z, delta_logp = [], []
    for ii in torch.split(torch.arange(0, x.shape[0]), memory):
        z_, delta_logp_ = inverse_transform(x[ii], zeros[ii])
        z.append(z_)
        delta_logp.append(delta_logp_)
    return torch.cat(z, 0).cpu().numpy()


def visualize_transform(samples, inverse_transform=None):
    if inverse_transform is not None:
        plt_flow_density(inverse_transform)


model = SequentialFlow([iResBlock(nn.Sequential(nn.Linear(2, 8), nn.ELU(), nn.Linear(8, 2))) for _ in range(2)])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for itr in range(1, 7):
    optimizer.zero_grad()
    z, delta_logp = model(torch.randn(32, 2), torch.zeros(32, 1))
    loss = -torch.mean(-0.5 * (z ** 2).sum(1, keepdim=True) - delta_logp)
    loss.backward()
    optimizer.step()
    if itr == 1 or itr % 3 == 0:
        with torch.no_grad():
            model.eval()
            p_samples = np.random.randn(200, 2)
            visualize_transform(p_samples, inverse_transform=model.forward)
            model.train()
print("ok")
