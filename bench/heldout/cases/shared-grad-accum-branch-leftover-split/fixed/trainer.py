import torch.nn.functional as F


def train_epoch(model, loader, optimizer, accum_steps=1):
    model.train()
    optimizer.zero_grad()
    total = 0.0
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        if accum_steps > 1:
            (loss / accum_steps).backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item()
    return total / len(loader)
