import random

import torch

from rl import Learner, ObsEncoder, QHead, ReplayBuffer

CFG = {"obs_dim": 8, "n_actions": 3, "steps": 60, "batch": 16, "learning_starts": 20, "eps": 0.3}


class ToyEnv:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.obs = torch.randn(CFG["obs_dim"], generator=self.g)

    def step(self, action):
        reward = float(self.obs[action] > 0)
        self.obs = torch.randn(CFG["obs_dim"], generator=self.g)
        return self.obs, reward, False


if __name__ == "__main__":
    torch.manual_seed(61)
    random.seed(61)
    env = ToyEnv(61)
    encoder = ObsEncoder(CFG["obs_dim"])
    learner = Learner(QHead(16, CFG["n_actions"]))
    buffer = ReplayBuffer(1000, seed=61)
    with torch.no_grad():
        z = encoder(env.obs)
    losses = []
    for step in range(CFG["steps"]):
        with torch.no_grad():
            greedy = learner.q(z).argmax().item()
        action = random.randrange(CFG["n_actions"]) if random.random() < CFG["eps"] else greedy
        next_obs, reward, done = env.step(action)
        with torch.no_grad():
            z_next = encoder(next_obs)
        buffer.push(z, action, reward, z_next, done)
        z = z_next
        if len(buffer) >= CFG["learning_starts"]:
            losses.append(learner.update(buffer.sample(CFG["batch"])))
            if step % 10 == 0:
                print(f"step {step} loss {losses[-1]:.4f}")
    param_sum = sum(p.sum().item() for p in learner.q.parameters())
    print(f"loss {sum(losses[-10:]) / 10:.4f} updates {learner.updates} param_sum {param_sum:.4f}")
