"""Named items of an output whose code the model does not read (`prediction["v"]` of a network built
by a factory): two heads of one network need not share a node of it, so a backward through one item
after a backward through another is not known to fail. The same item, or a value that reaches an
item a backward already went through, still is."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze


def _found(code: str) -> list[tuple[int, str]]:
    # The agent's module takes torch and everything else from a star import of the package.
    source = "from .network import *\n" + textwrap.dedent(code)
    return [(d.span.start.row, d.code) for d in analyze(source)]


_PPO = """
    class PPOAgent(BaseAgent):
        def __init__(self, config):
            BaseAgent.__init__(self, config)
            self.config = config
            self.task = config.task_fn()
            self.network = config.network_fn()
            if config.shared_repr:
                self.opt = config.optimizer_fn(self.network.parameters())
            else:
                self.actor_opt = config.actor_opt_fn(self.network.actor_params)
                self.critic_opt = config.critic_opt_fn(self.network.critic_params)
            self.total_steps = 0
            self.states = self.task.reset()
            self.states = config.state_normalizer(self.states)
            if config.shared_repr:
                self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda step: 1 - step / config.max_steps)

        def step(self):
            config = self.config
            entries = self.entries
            if config.shared_repr:
                self.lr_scheduler.step(self.total_steps)

            for _ in range(config.optimization_epochs):
                sampler = random_sample(np.arange(entries.state.size(0)), config.mini_batch_size)
                for batch_indices in sampler:
                    batch_indices = tensor(batch_indices).long()
                    entry = EntryCLS(*list(map(lambda x: x[batch_indices], entries)))

                    prediction = self.network(entry.state, entry.action)
                    ratio = (prediction['log_pi_a'] - entry.log_pi_a).exp()
                    obj = ratio * entry.advantage
                    obj_clipped = ratio.clamp(1.0 - self.config.ppo_ratio_clip,
                                              1.0 + self.config.ppo_ratio_clip) * entry.advantage
                    policy_loss = -torch.min(obj, obj_clipped).mean() - config.entropy_weight * prediction['entropy'].mean()

                    value_loss = 0.5 * (entry.ret - {second}).pow(2).mean()

                    approx_kl = (entry.log_pi_a - prediction['log_pi_a']).mean()
                    if config.shared_repr:
                        self.opt.zero_grad()
                        (policy_loss + value_loss).backward()
                        nn.utils.clip_grad_norm_(self.network.parameters(), config.gradient_clip)
                        self.opt.step()
                    else:
                        if approx_kl <= 1.5 * config.target_kl:
                            self.actor_opt.zero_grad()
                            policy_loss.backward()
                            self.actor_opt.step()
                        self.critic_opt.zero_grad()
                        value_loss.backward()
                        self.critic_opt.step()

"""


def test_separate_heads_of_an_unread_network_backward_ed_one_after_the_other_are_clean() -> None:
    # ShangtongZhang/DeepRL's PPO with separate actor and critic bodies: correct code.
    assert _found(_PPO.format(second='prediction["v"]')) == []


def test_the_same_head_read_again_by_another_expression_is_still_found() -> None:
    assert [code for _, code in _found(_PPO.format(second='prediction["log_pi_a"]'))] == ["GG002"]


def test_a_loss_that_also_reads_the_head_already_backward_ed_is_still_found() -> None:
    found = _found(_PPO.format(second='prediction["v"] * prediction["entropy"]'))
    assert [code for _, code in found] == ["GG002"]


def test_the_whole_output_of_an_unread_network_still_shares_its_graph() -> None:
    assert [code for _, code in _found(_PPO.format(second="prediction"))] == ["GG002"]
