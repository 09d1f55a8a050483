"""TRADES (L-inf PGD) with the natural softmax computed once, with its graph, before the attack loop.

`trades_loss` builds `p_natural = F.softmax(model(x_natural))` (no `no_grad`, no `detach`) and uses it as
the KL target of every attack step, each of which takes `torch.autograd.grad(loss_kl, [x_adv])` without
`retain_graph`. Only the nodes on a path to `x_adv` run (and are freed): the KL node and this step's
`model(x_adv)`. `p_natural`'s own nodes, the natural forward, lead to no input asked for, so they are
never executed and never freed; the next step builds a new KL node on a fresh `model(x_adv)`.

The model believed (GG007): "this backward goes through `p_natural`'s graph, which `torch.autograd.grad`
at this line freed (it ran without `retain_graph` or `create_graph`)". False: the attack runs for any
number of steps (checked below); the final loss is backward-ed once.

Reduces imrahulr/adversarial_robustness_pytorch (6df6a8f0cd49cf6d18507a4b574c004ab6eedf49)
core/utils/trades.py:38 (GG007); the same at gowal21uncovering/utils/trades.py:42 and at its caller
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

    if attack == 'linf-pgd':
        for _ in range(perturb_steps):
            x_adv.requires_grad_()
            with torch.enable_grad():
                loss_kl = criterion_kl(F.log_softmax(model(x_adv), dim=1), p_natural)
            grad = torch.autograd.grad(loss_kl, [x_adv])[0]
            x_adv = x_adv.detach() + step_size * torch.sign(grad.detach())
            x_adv = torch.min(torch.max(x_adv, x_natural - epsilon), x_natural + epsilon)
            x_adv = torch.clamp(x_adv, 0.0, 1.0)
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
    for attack in sys.argv[1:] or ['linf-pgd']:
        main(attack)
    print('ok')
