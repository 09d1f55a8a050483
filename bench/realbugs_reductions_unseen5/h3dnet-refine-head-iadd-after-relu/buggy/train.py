"""Reduction of zaiweizhang/H3DNet train.py at 9cc5c04 (fix 81bd6af): the network module is imported
by a name that comes from the command line (default 'hdnet'), its HDNet is built and the detection
loss is backward-ed per batch. torch 2.13: "one of the variables needed for gradient computation has
been modified by an inplace operation" at the loss.backward() below (train.py:263 in the repository);
the cause is the `+=` in proposal_refine.ProposalModuleRefine.forward (../fixed changes that line).
gradguard at 1eed1da reports nothing for this program (missed, as on the repository).
"""

import argparse
import importlib
import os
import sys

import torch

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--model", default="hdnet", help="Model file name [default: hdnet]")
FLAGS = parser.parse_args([])

MODEL = importlib.import_module(FLAGS.model)  # import network module
net = MODEL.HDNet(num_class=3)
criterion = MODEL.get_loss
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
torch.manual_seed(0)
for batch in range(2):
    points = torch.randn(2, 3, 32)
    end_points = net(points)
    loss = criterion(end_points, torch.randn_like(end_points))
    optimizer.zero_grad()
    loss.backward()  # buggy: raises here, first batch
    optimizer.step()
print("ok")
