"""CQL's temperatures, resumed from a checkpoint: a loss backward-s through exp(log_alpha()) after a step.

Model believed: `policy_loss.backward()` goes through `alpha`'s graph, and the optimizer step of the
temperature just before it changed in place a tensor that graph saved ("it fails the first time
`self.use_automatic_entropy_tuning` holds"); likewise `qf_loss.backward()` through `alpha_prime` after
the step of `log_alpha_prime` ("... `self.cql_lagrange` holds"). Neither graph saved a stepped tensor:
`exp` saves its output, `* float` nothing, `clamp` its input (the exp's output), `alpha * log_pi`
`alpha`; the backward only adds to the temperature's `.grad`, zeroed before its next use. The
finding needs the resume path: `load_state_dict` replaces the `Scalar` modules by items of
`torch.load(...)`; without it, or with those items from a dict written out, the file is clean.
(After such a resume the optimizers still hold the old Scalars' parameters: the loaded temperatures
are no longer tuned, a defect of its own, but no autograd error.) Runs fine with and without `--load_model` (a first run writes
/tmp/r49_checkpoint.pt), `--no_lagrange`, `--no_entropy_tuning`. Reduces tinkoff-ai/CORL
(6afec90484bbf47dee05fdf525e26a3ebe028e9b) algorithms/offline/cql.py:777 and :782 (GG011), the same
in algorithms/finetune/cql.py:823/:828 and algorithms/finetune/cal_ql.py:924/:929 (`ContinuousCQL`
/ `CalQL`: `Scalar` modules returning a Parameter, `_alpha_and_alpha_loss`, `_q_loss` with
`alpha_prime_loss.backward(retain_graph=True)`, `trainer.load_state_dict(torch.load(policy_file))`
when `config.load_model` is set).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Scalar(nn.Module):
    def __init__(self, init_value: float):
        super().__init__()
        self.constant = nn.Parameter(torch.tensor(init_value, dtype=torch.float32))

    def forward(self) -> nn.Parameter:
        return self.constant


class TinyCQL:
    def __init__(self, use_automatic_entropy_tuning=True, cql_lagrange=True):
        self.actor = nn.Linear(4, 2)
        self.critic = nn.Linear(6, 1)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), 1e-3)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), 1e-3)
        self.use_automatic_entropy_tuning = use_automatic_entropy_tuning
        self.cql_lagrange = cql_lagrange
        self.alpha_multiplier = 1.0
        if self.use_automatic_entropy_tuning:
            self.log_alpha = Scalar(0.0)
            self.alpha_optimizer = torch.optim.Adam(self.log_alpha.parameters(), 3e-4)
        self.log_alpha_prime = Scalar(1.0)
        self.alpha_prime_optimizer = torch.optim.Adam(self.log_alpha_prime.parameters(), 3e-4)

    def _alpha_and_alpha_loss(self, observations, log_pi):
        if self.use_automatic_entropy_tuning:
            alpha_loss = -(self.log_alpha() * (log_pi - 2.0).detach()).mean()
            alpha = self.log_alpha().exp() * self.alpha_multiplier
        else:
            alpha_loss = observations.new_tensor(0.0)
            alpha = observations.new_tensor(self.alpha_multiplier)
        return alpha, alpha_loss

    def _q_loss(self, observations, actions):
        q = self.critic(torch.cat([observations, actions], -1)).squeeze(-1)
        diff = (torch.logsumexp(torch.stack([q, q * 0.5], -1), -1) - q).mean()
        if self.cql_lagrange:
            alpha_prime = torch.clamp(torch.exp(self.log_alpha_prime()), min=0.0, max=1000000.0)
            cql_loss = alpha_prime * 5.0 * (diff - 10.0)
            self.alpha_prime_optimizer.zero_grad()
            alpha_prime_loss = -cql_loss * 0.5
            alpha_prime_loss.backward(retain_graph=True)
            self.alpha_prime_optimizer.step()
        else:
            cql_loss = diff * 5.0
        return F.mse_loss(q, torch.zeros_like(q)) + cql_loss

    def train(self, observations, actions):
        out = self.actor(observations)
        new_actions, log_pi = torch.tanh(out), out.sum(-1)
        alpha, alpha_loss = self._alpha_and_alpha_loss(observations, log_pi)
        q_new = self.critic(torch.cat([observations, new_actions], -1)).squeeze(-1)
        policy_loss = (alpha * log_pi - q_new).mean()
        qf_loss = self._q_loss(observations, actions)

        if self.use_automatic_entropy_tuning:
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()

        self.actor_optimizer.zero_grad()
        policy_loss.backward()
        self.actor_optimizer.step()

        self.critic_optimizer.zero_grad()
        qf_loss.backward(retain_graph=True)
        self.critic_optimizer.step()
        return qf_loss.item()

    def state_dict(self):
        return {
            "sac_log_alpha": self.log_alpha,
            "sac_log_alpha_optim": self.alpha_optimizer.state_dict(),
            "cql_log_alpha": self.log_alpha_prime,
            "cql_log_alpha_optim": self.alpha_prime_optimizer.state_dict(),
        }

    def load_state_dict(self, state_dict):
        self.log_alpha = state_dict["sac_log_alpha"]
        self.alpha_optimizer.load_state_dict(state_dict=state_dict["sac_log_alpha_optim"])
        self.log_alpha_prime = state_dict["cql_log_alpha"]
        self.alpha_prime_optimizer.load_state_dict(state_dict=state_dict["cql_log_alpha_optim"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--no_entropy_tuning", action="store_true")
    parser.add_argument("--no_lagrange", action="store_true")
    parser.add_argument("--load_model", default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    agent = TinyCQL(not args.no_entropy_tuning, not args.no_lagrange)
    if args.load_model != "":
        agent.load_state_dict(torch.load(args.load_model, weights_only=False))
    for _ in range(5):
        agent.train(torch.randn(8, 4), torch.rand(8, 2) * 2 - 1)
    if args.load_model == "" and not args.no_entropy_tuning:
        torch.save(agent.state_dict(), "/tmp/r49_checkpoint.pt")
    print("ok")
