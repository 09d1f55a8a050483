"""Two tasks on one encoder, each with its own optimizer and learning rate."""
import torch
import torch.nn.functional as F

from mtl import MultiHeadNet, make_optimizers

IN_DIM = 10


def make_data(n=192):
    x = torch.randn(n, IN_DIM)
    y_a = x[:, :3].argmax(1)
    y_b = x[:, 3] - x[:, 4]
    return list(zip(x.split(32), y_a.split(32), y_b.split(32)))


def train(model, batches, opt_a, opt_b, epochs=2):
    model.train()
    for epoch in range(epochs):
        for x, y_a, y_b in batches:
            logits, reg = model(x)
            loss_a = F.cross_entropy(logits, y_a)
            loss_b = F.mse_loss(reg, y_b)
            opt_a.zero_grad()
            opt_b.zero_grad()
            loss_a.backward(retain_graph=True)
            loss_b.backward()
            opt_a.step()
            opt_b.step()
    return loss_a.item(), loss_b.item()


def main():
    torch.manual_seed(0)
    model = MultiHeadNet(IN_DIM)
    opt_a, opt_b = make_optimizers(model)
    loss_a, loss_b = train(model, make_data(), opt_a, opt_b)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss_a {loss_a:.6f} loss_b {loss_b:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
