"""HAPPO's value loss normalises the returns with a PopArt module whose running statistics are
`nn.Parameter(..., requires_grad=False)` tensors, updated in place by the normaliser's forward.

`PopArt.forward(x, train=True)` adds the batch's (detached) statistics into `running_mean`,
`running_mean_sq` and `debiasing_term` with `mul_`/`add_`, then returns `(x - mean) / sqrt(var)`.
None of those tensors requires grad, and the returns do not either, so the normalised returns carry
no graph at all: no node saves `running_mean`. `cal_value_loss` calls `normalize` twice (clipped and
unclipped errors), each call writing the statistics in place, before the loss is backward-ed once.

The model believed (GG011): the value loss goes through `value_loss`'s graph, but the in-place write
to `self.running_mean` has since changed a tensor that graph saved ("it fails the first time `train`
holds"). False: the program runs with PopArt (checked below).

Reduces marlbenchmark/on-policy (de66d7a4b23fac2513f56f96f73b3f5cb96695ac)
onpolicy/algorithms/happo/happo_trainer.py:161 and onpolicy/algorithms/hatrpo/hatrpo_trainer.py:224
(GG011, the write at onpolicy/algorithms/utils/popart_hatrpo.py:55).
"""
import numpy as np
import torch
import torch.nn as nn


class PopArt(nn.Module):
    def __init__(self, input_shape, norm_axes=1, beta=0.99999, epsilon=1e-5, device=torch.device("cpu")):
        super(PopArt, self).__init__()
        self.norm_axes = norm_axes
        self.epsilon = epsilon
        self.beta = beta
        self.tpdv = dict(dtype=torch.float32, device=device)
        self.running_mean = nn.Parameter(torch.zeros(input_shape), requires_grad=False).to(**self.tpdv)
        self.running_mean_sq = nn.Parameter(torch.zeros(input_shape), requires_grad=False).to(**self.tpdv)
        self.debiasing_term = nn.Parameter(torch.tensor(0.0), requires_grad=False).to(**self.tpdv)

    def running_mean_var(self):
        debiased_mean = self.running_mean / self.debiasing_term.clamp(min=self.epsilon)
        debiased_mean_sq = self.running_mean_sq / self.debiasing_term.clamp(min=self.epsilon)
        debiased_var = (debiased_mean_sq - debiased_mean ** 2).clamp(min=1e-2)
        return debiased_mean, debiased_var

    def forward(self, input_vector, train=True):
        if type(input_vector) == np.ndarray:
            input_vector = torch.from_numpy(input_vector)
        input_vector = input_vector.to(**self.tpdv)
        if train:
            detached_input = input_vector.detach()
            batch_mean = detached_input.mean(dim=tuple(range(self.norm_axes)))
            batch_sq_mean = (detached_input ** 2).mean(dim=tuple(range(self.norm_axes)))
            weight = self.beta
            self.running_mean.mul_(weight).add_(batch_mean * (1.0 - weight))
            self.running_mean_sq.mul_(weight).add_(batch_sq_mean * (1.0 - weight))
            self.debiasing_term.mul_(weight).add_(1.0 * (1.0 - weight))
        mean, var = self.running_mean_var()
        return (input_vector - mean[(None,) * self.norm_axes]) / torch.sqrt(var)[(None,) * self.norm_axes]

    def normalize(self, input_vector, train=True):
        return self.forward(input_vector, train)


class HAPPO():
    def __init__(self, critic, use_popart=True):
        self.critic = critic
        self.critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
        self.clip_param = 0.2
        self.value_loss_coef = 1.0
        self._use_popart = use_popart
        self.value_normalizer = PopArt(1) if use_popart else None

    def cal_value_loss(self, values, value_preds_batch, return_batch):
        value_pred_clipped = value_preds_batch + (values - value_preds_batch).clamp(-self.clip_param, self.clip_param)
        if self._use_popart:
            error_clipped = self.value_normalizer.normalize(return_batch) - value_pred_clipped
            error_original = self.value_normalizer.normalize(return_batch) - values
        else:
            error_clipped = return_batch - value_pred_clipped
            error_original = return_batch - values
        value_loss = torch.max(error_original ** 2 / 2, error_clipped ** 2 / 2)
        return value_loss.mean()

    def ppo_update(self, obs, value_preds_batch, return_batch):
        values = self.critic(obs)
        value_loss = self.cal_value_loss(values, value_preds_batch, return_batch)
        self.critic_optimizer.zero_grad()
        (value_loss * self.value_loss_coef).backward()
        self.critic_optimizer.step()
        return value_loss

    def train(self, batches):
        info = 0.0
        for _ in range(2):
            for obs, value_preds, returns in batches:
                info += self.ppo_update(obs, value_preds, returns).item()
        return info


if __name__ == '__main__':
    torch.manual_seed(0)
    trainer = HAPPO(nn.Linear(3, 1))
    batches = [(torch.rand(6, 3), torch.rand(6, 1), torch.rand(6, 1)) for _ in range(3)]
    trainer.train(batches)
    print('ok')
