"""A module caches the key names of the parameter dict it is given, on `self`.

Model believed: `tuple(params.keys())`, stored in a dict attribute of the module and read back,
carries the graph of the tensors in `params` (keys are strings), so the next step's forward reads
the graph the previous backward freed. Runs fine. Reduces tristandeleu/pytorch-meta
examples/maml/train.py:81 (GG003 on `outer_loss`; here it names `sub`, the callee's local):
`MetaModule.get_subdict` (torchmeta/modules/module.py:36-52) caches `tuple(params.keys())` in
`self._children_modules_parameters_cache`; replacing the cached read by `names = all_names`
removes the finding.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.cache = dict()

    def get_subdict(self, params):
        all_names = tuple(params.keys())
        if all_names not in self.cache:
            self.cache[all_names] = all_names
        return dict([(name, params[name]) for name in self.cache[all_names]])

    def forward(self, x, params):
        sub = self.get_subdict(params)
        return F.linear(x, sub["weight"], sub["bias"])


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    params = dict((n, p * 1.0) for n, p in model.fc.named_parameters())
    loss = model(torch.randn(5, 4), params).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok")
