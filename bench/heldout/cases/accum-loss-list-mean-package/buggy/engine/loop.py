import torch


def train_one_epoch(model, loader, optimizer, max_norm=1.0):
    """Train for one epoch and return the running mean of the training loss."""
    model.train()
    losses = []
    for x, y in loader:
        loss = model.loss(x, y)
        losses.append(loss)
        mean_loss = torch.stack(losses).mean()
        optimizer.zero_grad()
        mean_loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
    return mean_loss.item()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = sum(model.loss(x, y).item() for x, y in loader)
    return total / len(loader)
