import torch


def train_batch(model, x, y, hidden, optimizer, criterion, clip=1.0):
    """One truncated-BPTT update on a chunk; returns the loss and the final hidden state."""
    model.train()
    optimizer.zero_grad()
    out, hidden = model(x, hidden)
    loss = criterion(out.reshape(-1, out.size(-1)), y.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return loss.item(), hidden
