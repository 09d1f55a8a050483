"""Reduction of pranz24/pytorch-soft-actor-critic main.py:88 GG006 (false; appeared at cc0be05, not 02d3de9).

`self.automatic_entropy_tuning` is fixed for the whole run (set in __init__). When it holds, `self.alpha`
is rebuilt from `log_alpha` after every update, so each alpha graph is backward-ed once (policy_loss);
when it does not, `self.alpha` is a float. The evaluation episodes after training (more tests and
loops in the program) make the analysis forget that flag and join the two: an alpha built on a tuned
update is then taken to reach the next update's policy_loss without being rebuilt.
Runs under torch with and without --automatic_entropy_tuning 1; gradguard reports GG006 at line 55ish.
"""
import argparse
import torch
import torch.nn.functional as F
from torch.optim import Adam


class Policy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.nn.Linear(3, 1)
        self.log_std = torch.nn.Linear(3, 1)

    def sample(self, state):
        mean, std = self.mean(state), self.log_std(state).clamp(-5, 2).exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()
        return torch.tanh(x_t), normal.log_prob(x_t), torch.tanh(mean)


class SAC(object):
    def __init__(self, args):
        self.alpha = args.alpha
        self.automatic_entropy_tuning = args.automatic_entropy_tuning
        self.critic = torch.nn.Linear(4, 1)
        self.critic_optim = Adam(self.critic.parameters(), lr=1e-3)
        if self.automatic_entropy_tuning is True:
            self.target_entropy = -1.0
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optim = Adam([self.log_alpha], lr=1e-3)
        self.policy = Policy()
        self.policy_optim = Adam(self.policy.parameters(), lr=1e-3)

    def update_parameters(self, state_batch, action_batch, reward_batch):
        with torch.no_grad():
            _, next_log_pi, _ = self.policy.sample(state_batch)
            next_q_value = reward_batch - self.alpha * next_log_pi
        qf = self.critic(torch.cat([state_batch, action_batch], 1))
        qf_loss = F.mse_loss(qf, next_q_value)
        self.critic_optim.zero_grad()
        qf_loss.backward()
        self.critic_optim.step()

        pi, log_pi, _ = self.policy.sample(state_batch)
        min_qf_pi = self.critic(torch.cat([state_batch, pi], 1))
        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()
        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()

        if self.automatic_entropy_tuning:
            alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optim.zero_grad()
            alpha_loss.backward()
            self.alpha_optim.step()
            self.alpha = self.log_alpha.exp()
            alpha_tlogs = self.alpha.clone()
        return qf_loss.item(), policy_loss.item()


parser = argparse.ArgumentParser()
parser.add_argument('--alpha', type=float, default=0.2)
parser.add_argument('--automatic_entropy_tuning', type=bool, default=False)
parser.add_argument('--eval', type=bool, default=True)
args = parser.parse_args()

class Env:
    """A stand-in for the gym environment: 20-step episodes."""
    def reset(self):
        self.t = 0
        return torch.randn(3)

    def step(self, action):
        self.t += 1
        return torch.randn(3), float(torch.randn(())), self.t >= 20, {}


env = Env()
agent = SAC(args)
memory = []
total_numsteps = 0
for i_episode in range(1, 4):
    episode_reward = 0
    done = False
    state = env.reset()
    while not done:
        action = agent.policy.sample(state.unsqueeze(0))[0].detach()[0]
        if len(memory) > 8:
            batch = memory[-8:]
            states = torch.stack([b[0] for b in batch])
            actions = torch.stack([b[1] for b in batch])
            rewards = torch.tensor([[b[2]] for b in batch])
            losses = agent.update_parameters(states, actions, rewards)
        next_state, reward, done, _ = env.step(action)
        total_numsteps += 1
        episode_reward += reward
        memory.append((state, action, reward))
        state = next_state

    if i_episode % 2 == 0 and args.eval is True:
        avg_reward = 0.
        for _ in range(2):
            state = env.reset()
            episode_reward = 0
            done = False
            while not done:
                action = agent.policy.sample(state.unsqueeze(0))[2].detach()[0]
                next_state, reward, done, _ = env.step(action)
                episode_reward += reward
                state = next_state
            avg_reward += episode_reward
print("ok", total_numsteps)
