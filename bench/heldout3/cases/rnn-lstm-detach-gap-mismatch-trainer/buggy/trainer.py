import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, hid=32):
        super().__init__()
        self.enc = nn.Linear(obs_dim, hid)
        self.cell = nn.LSTMCell(hid, hid)
        self.pi = nn.Linear(hid, n_actions)
        self.hid = hid

    def init_hidden(self, batch):
        return (torch.zeros(batch, self.hid), torch.zeros(batch, self.hid))

    def forward(self, obs, prev_hid):
        h, c = self.cell(torch.relu(self.enc(obs)), prev_hid)
        return self.pi(h), (h, c)


class Trainer:
    """Behaviour cloning of an expert that acts on the running sum of its observations."""

    def __init__(self, model, args):
        self.model = model
        self.args = args
        self.opt = torch.optim.RMSprop(model.parameters(), lr=args["lr"], alpha=0.97, eps=1e-6)
        self.stats = {"loss": [], "acc": []}

    def run_episode(self, obs, expert_actions):
        args = self.args
        prev_hid = self.model.init_hidden(obs.size(1))
        loss = 0
        correct = 0
        for t in range(obs.size(0)):
            logits, prev_hid = self.model(obs[t], prev_hid)
            loss = loss + F.cross_entropy(logits, expert_actions[t])
            correct += (logits.argmax(-1) == expert_actions[t]).sum().item()
            if (t + 1) % args["bptt"] == 0:
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), args["grad_clip"])
                self.opt.step()
                self.stats["loss"].append(loss.item() / args["bptt"])
                loss = 0
            if (t + 1) % args["detach_gap"] == 0:
                prev_hid = (prev_hid[0].detach(), prev_hid[1].detach())
        self.stats["acc"].append(correct / obs.numel() * obs.size(-1))
