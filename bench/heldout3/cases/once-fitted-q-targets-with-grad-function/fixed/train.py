"""Fitted Q iteration on a fixed batch of transitions."""
import argparse

import torch
import torch.nn.functional as F

from rl_utils import QNet, chain_transitions


def fitted_q_iteration(q, data, optimizer, args):
    obs, act, rew, next_obs, done = data
    for k in range(args.outer):
        # regression targets for this round
        with torch.no_grad():
            next_q = q(next_obs).max(1).values
            targets = rew + args.gamma * next_q * (~done).float()
        for step in range(args.inner):
            idx = torch.randint(len(obs), (args.batch,))
            pred = q(obs[idx]).gather(1, act[idx, None]).squeeze(1)
            loss = F.smooth_l1_loss(pred, targets[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"round {k} loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--outer", type=int, default=4)
    ap.add_argument("--inner", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--lr", type=float, default=5e-3)
    args = ap.parse_args()
    torch.manual_seed(4)
    g = torch.Generator().manual_seed(4)
    data = chain_transitions(256, g=g)
    q = QNet(6, 2)
    optimizer = torch.optim.Adam(q.parameters(), lr=args.lr)
    final = fitted_q_iteration(q, data, optimizer, args)
    with torch.no_grad():
        greedy = q(torch.eye(6)).argmax(1).tolist()
    param_sum = sum(p.sum().item() for p in q.parameters())
    print(f"loss {final:.4f} greedy {''.join(map(str, greedy))} param_sum {param_sum:.4f}")
