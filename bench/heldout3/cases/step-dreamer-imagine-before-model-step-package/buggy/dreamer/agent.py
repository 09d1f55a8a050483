import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, world_model, actor, cfg):
        self.wm, self.actor, self.cfg = world_model, actor, cfg
        self.opts = {
            "model": torch.optim.Adam(world_model.parameters(), lr=cfg["model_lr"]),
            "actor": torch.optim.Adam(actor.parameters(), lr=cfg["actor_lr"]),
        }

    def imagine(self, start):
        z, ret, discount = start, 0.0, 1.0
        for _ in range(self.cfg["horizon"]):
            z = self.wm.step(z, self.actor(z))
            ret = ret + discount * self.wm.reward(z).squeeze(-1)
            discount *= self.cfg["gamma"]
        return ret

    def train_batch(self, obs, act, rew):
        post = self.wm.encoder(obs)
        pred_next = self.wm.step(post[:, :-1], act[:, :-1])
        model_loss = (F.mse_loss(pred_next, post[:, 1:].detach())
                      + F.mse_loss(self.wm.reward(post).squeeze(-1), rew))
        start = post.detach().reshape(-1, post.size(-1))
        actor_loss = -self.imagine(start).mean()

        self.opts["model"].zero_grad()
        model_loss.backward()
        self.opts["model"].step()

        self.opts["actor"].zero_grad()
        actor_loss.backward()
        self.opts["actor"].step()
        return {"model": model_loss.item(), "actor": actor_loss.item()}
