import torch


class Trainer:
    """Splits every batch into `micro_batches` chunks to bound activation memory."""

    def __init__(self, model, criterion, optimizer, micro_batches=4):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.micro_batches = micro_batches
        self.step = 0

    def train_step(self, x, y):
        self.model.train()
        self.optimizer.zero_grad()
        loss_sum = 0.0
        for xc, yc in zip(x.chunk(self.micro_batches), y.chunk(self.micro_batches)):
            loss = self.criterion(self.model(xc), yc) / self.micro_batches
            loss_sum += loss
            loss_sum.backward()
        self.optimizer.step()
        self.step += 1
        return loss_sum.item()

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        return self.criterion(self.model(x), y).item()
