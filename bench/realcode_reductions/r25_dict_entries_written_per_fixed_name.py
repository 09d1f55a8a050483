# Reduced by hand (2026-12-06) from the shape of feature extractors in real training code: a dict
# written per name of a fixed list inside the training loop (`feats[name] = block(x)`), read in the
# same step. Each step writes the same entries again: no graph of an earlier step stays in `feats`.
# gradguard reported GG003 on `feats` before 704029a. Runs fine under torch.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return x


def main():
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    names = ["a", "b"]
    feats = {}
    for step in range(10):
        x = torch.randn(2, 4)
        for name in names:
            feats[name] = model.blocks[name](x)
        out = model.head(torch.cat([feats["a"], feats["b"]], dim=1))
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
