"""Online classification of a regime-switching stream where only every k-th step is labelled."""
import torch

from cell import OnlineGRU
from trainer import OnlineTrainer

IN_DIM, HIDDEN, N_CLASSES = 3, 16, 2
LABEL_EVERY = 5
LENGTH = 80


def regime_stream(length):
    regime = 0
    for t in range(length):
        if t % 17 == 0:
            regime = 1 - regime
        x = torch.randn(1, IN_DIM) + (1.5 if regime else -1.5)
        yield t, x, torch.tensor([regime])


@torch.no_grad()
def replay_accuracy(model, length=40):
    h = model.initial_state()
    correct = 0
    for t, x, y in regime_stream(length):
        logits, h = model(x, h)
        correct += int(logits.argmax(1).item() == y.item())
    return correct / length


def main():
    torch.manual_seed(0)
    model = OnlineGRU(IN_DIM, HIDDEN, N_CLASSES)
    trainer = OnlineTrainer(model)
    correct = 0
    for t, x, y in regime_stream(LENGTH):
        label = y if t % LABEL_EVERY == LABEL_EVERY - 1 else None
        pred = trainer.observe(x, label)
        correct += int(pred.item() == y.item())
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {trainer.last_loss:.6f} updates {trainer.updates} "
          f"online_acc {correct / LENGTH:.4f} replay_acc {replay_accuracy(model):.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
