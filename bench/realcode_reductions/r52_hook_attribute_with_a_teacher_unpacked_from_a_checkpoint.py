"""DeepInversion: BatchNorm statistics taken by forward hooks, read after each forward of the teacher.

Model believed: "`mod.r_feature` carries the previous iteration's graph, which the backward at
r52_helpers_deepinversion.py freed" (GG003 at the call of `get_images`). Each
`DeepInversionFeatureHook` registers `hook_fn` on one BatchNorm layer of the teacher; every
`net_teacher(inputs_jit)` runs the hooks, which set `self.r_feature` afresh from this forward's
input, so `loss_r_feature` is built from this iteration's graph only, and backward-ed once. Runs fine
with and without `--teacher /tmp/r52_teacher.pt` (written on first use). The finding needs the
teacher to be, on some path, an item unpacked from an unknown call: `net, _ = torch.load(...)` here,
`net, _ = amp.initialize(net, [], opt_level="O2")` under `--fp16` in the original (`torch.cuda.amp`
has no `initialize`: that path fails on its own, with AttributeError); with `net = torch.load(...)`
or no such path: clean. It also needs the class in an imported module (all in one file: clean) and is
fragile: without the jitter flip, or without the periodic `print(loss_r_feature.item())`, it turns
into a GG002; without the pooling arm it is gone. Reduces NVlabs/DeepInversion
(2413af1f97f6c73c4dcb47b6a44266aad458ff28) imagenet_inversion.py:175 (GG003; the original run also
ends "analysis incomplete ... step budget exhausted", which goes once the verifier branches are cut,
the finding staying), deepinversion.py:29-48 and :256-345.
"""
import argparse
import os

import torch
import torch.nn as nn

from r52_helpers_deepinversion import DeepInversionClass


def make_teacher():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))


def run(args):
    net = make_teacher()
    if args.teacher:
        net, _ = torch.load(args.teacher, weights_only=False)
    net.eval()
    coefficients = dict()
    coefficients["r_feature"] = args.r_feature
    coefficients["first_bn_multiplier"] = args.first_bn_multiplier
    coefficients["l2"] = args.l2
    coefficients["lr"] = args.lr
    coefficients["main_loss_multiplier"] = args.main_loss_multiplier
    engine = DeepInversionClass(net_teacher=net, bs=args.bs, criterion=nn.CrossEntropyLoss(),
                                coefficients=coefficients)
    engine.get_images()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--teacher', default='')
    parser.add_argument('--bs', default=4, type=int)
    parser.add_argument('--r_feature', type=float, default=0.05)
    parser.add_argument('--first_bn_multiplier', type=float, default=10.)
    parser.add_argument('--lr', type=float, default=0.2)
    parser.add_argument('--l2', type=float, default=0.00001)
    parser.add_argument('--main_loss_multiplier', type=float, default=1.0)
    args = parser.parse_args()
    if args.teacher and not os.path.exists(args.teacher):
        torch.save((make_teacher().eval(), None), args.teacher)
    run(args)
    print("ok")
