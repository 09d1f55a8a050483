import torch


class CueEnv:
    """Vectorised toy task: a cue is shown at the first step of an episode, the agent must
    repeat it on every later step. Episodes have random lengths."""

    def __init__(self, n_envs, n_cues=3, max_len=6, seed=0):
        self.n, self.k, self.max_len = n_envs, n_cues, max_len
        self.g = torch.Generator().manual_seed(seed)
        self.cue = torch.zeros(n_envs, dtype=torch.long)
        self.t = torch.zeros(n_envs, dtype=torch.long)
        self.length = torch.zeros(n_envs, dtype=torch.long)
        self.reset(torch.ones(n_envs, dtype=torch.bool))

    def reset(self, mask):
        m = int(mask.sum())
        self.cue[mask] = torch.randint(self.k, (m,), generator=self.g)
        self.length[mask] = torch.randint(2, self.max_len + 1, (m,), generator=self.g)
        self.t[mask] = 0

    def observe(self):
        obs = torch.zeros(self.n, self.k + 1)
        first = self.t == 0
        obs[first, self.cue[first]] = 1.0
        obs[:, -1] = self.t.float() / self.max_len
        return obs

    def step(self, action):
        reward = ((action == self.cue) & (self.t > 0)).float()
        self.t += 1
        done = self.t >= self.length
        self.reset(done)
        return reward, done
