"""Two-layer GCN node classifier trained on mini-batches of labelled nodes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.linear = nn.Linear(in_dim, out_dim)

    def forward(self, x, adj):
        return adj @ self.linear(x)


class GCN(nn.Module):
    def __init__(self, in_dim, hidden, n_classes, dropout=0.2):
        super().__init__()
        self.conv1 = GraphConv(in_dim, hidden)
        self.conv2 = GraphConv(hidden, hidden)
        self.classifier = nn.Linear(hidden, n_classes)
        self.dropout = dropout

    def embed(self, x, adj):
        x = F.relu(self.conv1(x, adj))
        x = F.dropout(x, self.dropout, self.training)
        return F.relu(self.conv2(x, adj))

    def classify(self, h):
        return self.classifier(h)


def normalized_adjacency(n_nodes, n_edges):
    src = torch.randint(0, n_nodes, (n_edges,))
    dst = torch.randint(0, n_nodes, (n_edges,))
    adj = torch.zeros(n_nodes, n_nodes)
    adj[src, dst] = 1.0
    adj = ((adj + adj.t()) > 0).float() + torch.eye(n_nodes)
    deg_inv_sqrt = adj.sum(1).pow(-0.5)
    return deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]


def train(model, features, adj, labels, idx_train, optimizer, epochs=3, batch_size=16):
    model.train()
    h = model.embed(features, adj)
    for epoch in range(epochs):
        for batch in idx_train.split(batch_size):
            logits = model.classify(h[batch])
            loss = F.cross_entropy(logits, labels[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    n_nodes, n_feats, n_classes = 60, 12, 3
    adj = normalized_adjacency(n_nodes, 150)
    features = torch.randn(n_nodes, n_feats)
    labels = (features[:, :n_classes] + adj @ features[:, :n_classes]).argmax(1)
    idx_train = torch.randperm(n_nodes)[:48]
    model = GCN(n_feats, 16, n_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    loss = train(model, features, adj, labels, idx_train, optimizer)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} param_sum {param_sum:.6f}")
