"""Training an Inception-style classifier with an auxiliary head (weight 0.4)."""
import torch
import torch.nn as nn

from data import make_splits
from models import InceptionLike


def train_one_epoch(model, criterion, optimizer, x_train, y_train, batch_size=32):
    model.train()
    for image, target in zip(x_train.split(batch_size), y_train.split(batch_size)):
        logits, aux_logits = model(image)
        optimizer.zero_grad()
        aux_loss = 0.4 * criterion(aux_logits, target)
        aux_loss.backward()
        loss = criterion(logits, target)
        loss.backward()
        optimizer.step()
    return loss.item()


def evaluate(model, x_val, y_val):
    model.eval()
    with torch.no_grad():
        return (model(x_val).argmax(1) == y_val).float().mean().item()


def main():
    torch.manual_seed(0)
    (x_train, y_train), (x_val, y_val) = make_splits()
    model = InceptionLike(x_train.size(1), 4)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        loss = train_one_epoch(model, criterion, optimizer, x_train, y_train)
        acc = evaluate(model, x_val, y_val)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
