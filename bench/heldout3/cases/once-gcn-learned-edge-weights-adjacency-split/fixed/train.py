import argparse

import torch
import torch.nn.functional as F

from gcn import EdgeWeightedGCN
from graph_utils import random_community_graph

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--hidden", type=int, default=16)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--weight_decay", type=float, default=5e-4)
args = parser.parse_args()

torch.manual_seed(17)
edge_index, features, labels = random_community_graph()
n = features.size(0)
idx_train, idx_val = torch.arange(0, 20), torch.arange(20, n)

model = EdgeWeightedGCN(edge_index.size(1), n, features.size(1), args.hidden, int(labels.max()) + 1)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

for epoch in range(args.epochs):
    model.train()
    optimizer.zero_grad()
    adj = model.adjacency(edge_index)
    output = model(features, adj)
    loss_train = F.cross_entropy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()
    if epoch % 10 == 0:
        model.eval()
        with torch.no_grad():
            out = model(features, model.adjacency(edge_index))
            acc_val = (out[idx_val].argmax(1) == labels[idx_val]).float().mean().item()
        print(f"Epoch {epoch:04d} loss_train {loss_train.item():.4f} acc_val {acc_val:.4f}")

model.eval()
with torch.no_grad():
    out = model(features, model.adjacency(edge_index))
acc_val = (out[idx_val].argmax(1) == labels[idx_val]).float().mean().item()
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"loss_train {loss_train.item():.4f} acc_val {acc_val:.4f} param_sum {param_sum:.4f}")
