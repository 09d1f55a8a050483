"""TRADES (L2 PGD): the natural softmax computed once before the attack loop, with its graph, and a
perturbation `delta` stepped by its own SGD optimizer after each `loss.backward(retain_graph=True)`.

`optimizer_delta` owns only `delta`, a leaf; `adv = x_natural + delta` is rebuilt each step and the add
saves nothing, so no retained graph saved `delta` and its in-place step bumps no saved tensor's version
(the `.data` projections bump none either). The natural forward's graph saves the model's parameters,
which nothing steps inside the loop.

The model believed (GG011): "`loss` goes through `p_natural`'s graph, but the optimizer step has since
changed in place the parameters that graph saved". False: the attack runs (checked below).
The GG006 reported on the same line is true, and is kept here because it is the shape's: each
`loss.backward(retain_graph=True)` backpropagates through the pre-loop natural forward again (without
`retain_graph` the second step raises "Trying to backward through the graph a second time"), putting
into the model's parameters gradients that `optimizer.zero_grad()` throws away before the real loss:
wasted work, not a wrong update.

Reduces imrahulr/adversarial_robustness_pytorch (6df6a8f0cd49cf6d18507a4b574c004ab6eedf49)
core/utils/trades.py:57 (GG011); the same at gowal21uncovering/utils/trades.py:61 and at its caller
gowal21uncovering/utils/watrain.py:123.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


def trades_loss(model, x_natural, y, optimizer, step_size=0.003, epsilon=0.031, perturb_steps=10, beta=1.0,
                attack='linf-pgd'):
    criterion_kl = nn.KLDivLoss(reduction='sum')
    model.eval()
    batch_size = len(x_natural)
    x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).detach()
    p_natural = F.softmax(model(x_natural), dim=1)

    if attack == 'l2-pgd':
        delta = 0.001 * torch.randn(x_natural.shape).detach()
        delta = Variable(delta.data, requires_grad=True)
        optimizer_delta = optim.SGD([delta], lr=epsilon / perturb_steps * 2)
        for _ in range(perturb_steps):
            adv = x_natural + delta
            optimizer_delta.zero_grad()
            with torch.enable_grad():
                loss = (-1) * criterion_kl(F.log_softmax(model(adv), dim=1), p_natural)
            loss.backward(retain_graph=True)
            grad_norms = delta.grad.view(batch_size, -1).norm(p=2, dim=1)
            delta.grad.div_(grad_norms.view(-1, 1))
            if (grad_norms == 0).any():
                delta.grad[grad_norms == 0] = torch.randn_like(delta.grad[grad_norms == 0])
            optimizer_delta.step()
            delta.data.add_(x_natural)
            delta.data.clamp_(0, 1).sub_(x_natural)
            delta.data.renorm_(p=2, dim=0, maxnorm=epsilon)
        x_adv = Variable(x_natural + delta, requires_grad=False)
    else:
        raise ValueError(f'Attack={attack} not supported for TRADES training!')
    model.train()

    x_adv = Variable(torch.clamp(x_adv, 0.0, 1.0), requires_grad=False)
    optimizer.zero_grad()
    logits_natural = model(x_natural)
    logits_adv = model(x_adv)
    loss_natural = F.cross_entropy(logits_natural, y)
    loss_robust = (1.0 / batch_size) * criterion_kl(F.log_softmax(logits_adv, dim=1),
                                                    F.softmax(logits_natural, dim=1))
    loss = loss_natural + beta * loss_robust
    return loss, {'loss': loss.item()}


def main(attack):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.rand(8, 6), torch.randint(0, 3, (8,))
        loss, _ = trades_loss(model, x, y, optimizer, perturb_steps=4, attack=attack)
        loss.backward()
        optimizer.step()


if __name__ == '__main__':
    for attack in sys.argv[1:] or ['l2-pgd']:
        main(attack)
    print('ok')
