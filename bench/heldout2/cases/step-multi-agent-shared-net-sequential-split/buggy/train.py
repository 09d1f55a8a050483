"""Three agents share one policy network; each has its own reward rule."""
import torch

from agents import Agent, SharedPolicy

OBS_DIM = 5
N_AGENTS = 3
BATCH = 64

torch.manual_seed(29)
policy = SharedPolicy(OBS_DIM, N_AGENTS, n_actions=OBS_DIM)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
agents = [Agent(i, policy, preferred_shift=i + 1) for i in range(N_AGENTS)]

for it in range(120):
    obs = torch.randn(BATCH, OBS_DIM)
    results = [agent.reinforce_loss(obs) for agent in agents]
    for loss, _ in results:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    rewards = [r for _, r in results]
    if it % 40 == 0:
        print(f"it {it} rewards " + " ".join(f"{r:.3f}" for r in rewards))

param_sum = sum(p.sum().item() for p in policy.parameters())
print(f"final rewards {sum(rewards) / N_AGENTS:.4f} param_sum {param_sum:.4f}")
