import torch


def random_community_graph(n_nodes=40, n_comm=3, p_in=0.25, p_out=0.02, seed=0):
    g = torch.Generator().manual_seed(seed)
    comm = torch.randint(n_comm, (n_nodes,), generator=g)
    same = comm[:, None] == comm[None, :]
    prob = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    upper = torch.triu(torch.rand(n_nodes, n_nodes, generator=g) < prob, diagonal=1)
    src, dst = upper.nonzero(as_tuple=True)
    edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], 1)
    feats = torch.randn(n_nodes, 8, generator=g) + comm[:, None].float()
    return edge_index, feats, comm


def sym_normalize(edge_index, edge_weight, n_nodes):
    loops = torch.arange(n_nodes)
    ei = torch.cat([edge_index, torch.stack([loops, loops])], 1)
    ew = torch.cat([edge_weight, edge_weight.new_ones(n_nodes)])
    adj = torch.zeros(n_nodes, n_nodes).index_put((ei[0], ei[1]), ew, accumulate=True)
    deg_inv_sqrt = adj.sum(1).pow(-0.5)
    return deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]
