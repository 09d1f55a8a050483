"""PPO with separate actor and critic: one forward returns a dict of two heads that share no
non-leaf tensor; the policy loss is backward-ed (when the KL is small), then the value loss.

Model believed: the dict's entries are one value, so `policy_loss.backward()` frees the graph of
`prediction["v"]` (GG002); the same heads held in two variables get no finding. The same family as 03
(a list's items taken for one value).
Reduces ShangtongZhang/DeepRL deep_rl/agent/PPO_agent.py:98 (GaussianActorCriticNet with
`shared_repr = False`: `phi_body` is the identity, actor and critic bodies are separate).
"""
import torch
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor, self.critic = nn.Linear(4, 2), nn.Linear(4, 1)

    def forward(self, obs):
        return {"log_pi": self.actor(obs).log_softmax(-1)[:, 0], "v": self.critic(obs)[:, 0]}


net = ActorCritic()
actor_opt = torch.optim.SGD(net.actor.parameters(), lr=0.1)
critic_opt = torch.optim.SGD(net.critic.parameters(), lr=0.1)
for epoch in range(3):
    obs, old_log_pi, ret = torch.randn(8, 4), torch.randn(8), torch.randn(8)
    prediction = net(obs)
    policy_loss = -(prediction["log_pi"] - old_log_pi).exp().mean()
    value_loss = (ret - prediction["v"]).pow(2).mean()
    approx_kl = (old_log_pi - prediction["log_pi"]).mean()
    if approx_kl <= 0.5:
        actor_opt.zero_grad()
        policy_loss.backward()
        actor_opt.step()
    critic_opt.zero_grad()
    value_loss.backward()
    critic_opt.step()
print("ok")
