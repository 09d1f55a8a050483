"""GraphCL pre-training: jumping-knowledge "max" over a list of layer outputs, rebuilt in one arm.

Model believed: "`x` carries the previous iteration's graph, which the backward at line 102 freed"
(GG003 at `loss.backward()`; with `forward_cl`'s parameter renamed the name given is `h_list`).
`h_list` is a fresh local list at every call of `GNN.forward` and each step makes two fresh forwards
(one per augmented view) and one backward: nothing is carried from one step to the next. Runs fine
with `--JK last` (the default) and `--JK max`. The finding needs the last layer to take another arm
than the others (`F.dropout(h)` against `F.dropout(F.relu(h))`; one arm for all: clean) and the
"max" arm that rebinds `h_list` to a new list (without it: clean); renaming the comprehension
variable or the `x`s does not matter. Reduces Shen-Lab/GraphCL
(b4d7501a2090f94ca0871beb4ec97bf071eaed0f) transferLearning_MoleculeNet_PPI/chem/pretrain_graphcl.py:102
(GG003), with chem/model.py's `GNN.forward` (a GIN over torch_geometric, here a dense adjacency).
The original writes `h.unsqueeze_(0)` in that arm: with `--JK max` (or `sum`) and the default
`--dropout_ratio 0`, `F.dropout` returns the ReLU's output itself and the in-place unsqueeze bumps
the version of a tensor `ReluBackward0` saved, so that run does fail at line 102, but with "modified
by an inplace operation" at the first step, not the error reported; the finding is the same with
the out-of-place `unsqueeze(0)` used here, with which every run is fine.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class GINConv(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(emb_dim, 2 * emb_dim), nn.ReLU(), nn.Linear(2 * emb_dim, emb_dim))

    def forward(self, x, adj):
        return self.mlp(x + adj @ x)


class GNN(nn.Module):
    def __init__(self, num_layer, emb_dim, JK="last", drop_ratio=0):
        super().__init__()
        self.num_layer = num_layer
        self.drop_ratio = drop_ratio
        self.JK = JK
        self.x_embedding1 = nn.Embedding(10, emb_dim)
        self.gnns = nn.ModuleList([GINConv(emb_dim) for _ in range(num_layer)])
        self.batch_norms = nn.ModuleList([nn.BatchNorm1d(emb_dim) for _ in range(num_layer)])

    def forward(self, *argv):
        if len(argv) == 2:
            x, adj = argv[0], argv[1]
        else:
            raise ValueError("unmatched number of arguments.")
        x = self.x_embedding1(x[:, 0])
        h_list = [x]
        for layer in range(self.num_layer):
            h = self.gnns[layer](h_list[layer], adj)
            h = self.batch_norms[layer](h)
            if layer == self.num_layer - 1:
                h = F.dropout(h, self.drop_ratio, training=self.training)
            else:
                h = F.dropout(F.relu(h), self.drop_ratio, training=self.training)
            h_list.append(h)
        if self.JK == "last":
            node_representation = h_list[-1]
        elif self.JK == "max":
            h_list = [h.unsqueeze(0) for h in h_list]
            node_representation = torch.max(torch.cat(h_list, dim=0), dim=0)[0]
        return node_representation


class graphcl(nn.Module):
    def __init__(self, gnn, emb_dim):
        super().__init__()
        self.gnn = gnn
        self.projection_head = nn.Sequential(nn.Linear(emb_dim, emb_dim), nn.ReLU(inplace=True), nn.Linear(emb_dim, emb_dim))

    def forward_cl(self, x, adj):
        x = self.gnn(x, adj)
        x = x.mean(0, keepdim=True).expand(4, -1) + 0.01 * torch.randn(4, x.shape[1])
        x = self.projection_head(x)
        return x

    def loss_cl(self, x1, x2):
        T = 0.1
        batch_size, _ = x1.size()
        x1_abs = x1.norm(dim=1)
        x2_abs = x2.norm(dim=1)
        sim_matrix = torch.einsum('ik,jk->ij', x1, x2) / torch.einsum('i,j->ij', x1_abs, x2_abs)
        sim_matrix = torch.exp(sim_matrix / T)
        pos_sim = sim_matrix[range(batch_size), range(batch_size)]
        loss = pos_sim / (sim_matrix.sum(dim=1) - pos_sim)
        return - torch.log(loss).mean()


def train(model, loader, optimizer):
    model.train()
    for step, batch in enumerate(loader):
        batch1, batch2 = batch
        optimizer.zero_grad()
        x1 = model.forward_cl(batch1[0], batch1[1])
        x2 = model.forward_cl(batch2[0], batch2[1])
        loss = model.loss_cl(x1, x2)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--JK', type=str, default="last")
    args = parser.parse_args()
    model = graphcl(GNN(3, 16, JK=args.JK), 16)
    optimizer = optim.Adam(model.parameters(), lr=0.001)
    def view():
        return torch.randint(0, 10, (12, 2)), (torch.rand(12, 12) > 0.7).float()
    loader = [(view(), view()) for _ in range(3)]
    for epoch in range(2):
        train(model, loader, optimizer)
    print("ok")
