"""Double-checking a DQN learner whose TD target is built under no_grad: the Polyak update of the target
network may run before the backward, since no graph saved the target weights."""
import torch

from dqn import DQNLearner

OBS_DIM, N_ACTIONS, BUFFER = 3, 2, 1024

torch.manual_seed(103)
w = torch.randn(N_ACTIONS, OBS_DIM)
s = torch.randn(BUFFER, OBS_DIM)
a = torch.randint(0, N_ACTIONS, (BUFFER,))
r = (s * w[a]).sum(-1)
s2 = torch.roll(s, 1, dims=0)
done = (torch.rand(BUFFER) < 0.2).float()

learner = DQNLearner(OBS_DIM, N_ACTIONS, gamma=0.8, tau=0.1)
step, loss = 0, None
while step < 150:
    idx = torch.randint(0, BUFFER, (32,))
    loss = learner.update((s[idx], a[idx], r[idx], s2[idx], done[idx]))
    step += 1
param_sum = sum(p.sum().item() for p in learner.online.parameters())
target_sum = sum(p.sum().item() for p in learner.target.parameters())
print(f"final loss {loss:.4f} target_sum {target_sum:.4f} param_sum {param_sum:.4f}")
