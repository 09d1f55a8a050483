import torch
import torch.nn.functional as F
from torch.distributions import Categorical


class ActorCriticLearner:
    def __init__(self, nets, lr_actor=3e-3, lr_critic=1e-2):
        self.nets = nets
        self.optims = {
            "actor": torch.optim.Adam(nets["actor"].parameters(), lr=lr_actor),
            "critic": torch.optim.Adam(nets["critic"].parameters(), lr=lr_critic),
        }

    def policy(self, obs):
        return Categorical(logits=self.nets["actor"](obs))

    def update(self, obs, actions, returns):
        values = self.nets["critic"](obs).squeeze(-1)
        critic_loss = F.mse_loss(values, returns)
        self.optims["critic"].zero_grad()
        critic_loss.backward()
        self.optims["critic"].step()

        with torch.no_grad():
            advantage = returns - self.nets["critic"](obs).squeeze(-1)
        dist = self.policy(obs)
        actor_loss = -(dist.log_prob(actions) * advantage).mean() - 0.01 * dist.entropy().mean()
        self.optims["actor"].zero_grad()
        actor_loss.backward()
        self.optims["actor"].step()
        return actor_loss.item(), critic_loss.item()
