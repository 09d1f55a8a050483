import argparse

import torch

from recsys import TwoTower
from trainer import RetrievalTrainer


def interactions(n, n_users, n_items, g):
    users = torch.randint(n_users, (n,), generator=g)
    # each user mostly likes items in its own "genre" block
    block = n_items // 4
    genre = users % 4
    items = genre * block + torch.randint(block, (n,), generator=g)
    return users, items


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=30)
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(21)
    g = torch.Generator().manual_seed(21)
    trainer = RetrievalTrainer(TwoTower(args.users, args.items))
    for step in range(args.steps):
        u, i = interactions(args.batch, args.users, args.items, g)
        loss = trainer.train_step(u, i)
        if step % 5 == 0:
            print(f"step {step} loss {loss:.4f}")
    u, i = interactions(200, args.users, args.items, g)
    recall = trainer.recall_at(u, i)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"loss {loss:.4f} recall@5 {recall:.3f} param_sum {param_sum:.4f}")
