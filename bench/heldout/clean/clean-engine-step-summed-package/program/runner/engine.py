import torch


class Engine:
    def __init__(self, model, optimizer, clip=1.0):
        self.model, self.optimizer, self.clip = model, optimizer, clip
        self.steps = 0

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optimizer.step()
        self.steps += 1
        return loss.item()
