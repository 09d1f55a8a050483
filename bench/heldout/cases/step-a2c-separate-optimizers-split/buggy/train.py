"""A2C with separate actor and critic optimizers over a shared trunk."""
import torch

from models import ActorCritic
from rollout import collect

torch.manual_seed(0)

OBS_DIM, N_ACTIONS = 8, 4
N_ENVS = 32
UPDATES = 20

model = ActorCritic(OBS_DIM, N_ACTIONS)
actor_opt = torch.optim.Adam(list(model.trunk.parameters()) + list(model.actor.parameters()), lr=1e-3)
critic_opt = torch.optim.Adam(model.critic.parameters(), lr=1e-3)



def evaluate(model, n=256):
    with torch.no_grad():
        obs = torch.randn(n, OBS_DIM)
        logits, _ = model(obs)
        return (logits.argmax(1) == obs[:, :N_ACTIONS].argmax(1)).float().mean().item()


returns_log = []
for update in range(UPDATES):
    log_probs, values, rewards, entropy = collect(model, N_ENVS, OBS_DIM, N_ACTIONS)
    advantage = rewards - values

    critic_loss = advantage.pow(2).mean()
    actor_loss = -(log_probs * advantage).mean()
    actor_loss = actor_loss - 0.01 * entropy.mean()

    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()

    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()

    returns_log.append(rewards.mean().item())

avg_return = sum(returns_log[-5:]) / 5
greedy_acc = evaluate(model)
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final critic_loss {critic_loss.item():.6f} avg_return {avg_return:.6f} "
      f"greedy {greedy_acc:.4f} param_sum {param_sum:.6f}")
