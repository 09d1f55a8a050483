"""Fixed twin of ../buggy/train.py: the same program, except that
proposal_refine.ProposalModuleRefine.forward writes the sum out of place (net = net +
original_feature), as commit 81bd6af does.
torch 2.13: runs and prints "ok". gradguard at 1eed1da: nothing reported.
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
    loss.backward()
    optimizer.step()
print("ok")
