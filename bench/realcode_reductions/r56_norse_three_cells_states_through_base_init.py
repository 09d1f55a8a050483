"""Reduction of norse/norse norse/task/mnist.py:88 GG003 (false; exposed by 02d3de9).

norse's LIFCell passes its step function and state fallback to its project base class SNNCell through
`super().__init__(activation=..., state_fallback=self.initial_state)`. Before 02d3de9 that base
__init__ was not run, `self.activation(...)` was an unknown call and nothing was reported; now the
cells' forward runs the step function. ConvNet4's forward threads three cells' states (s0, s1, s2,
fresh None each call) through a time loop and writes each step's output into a preallocated tensor
(`voltages[ts] = ...`); the analysis then takes a state of this call to carry the previous batch's
graph. Needs all three cells, the step reached through the module's forward (a function inlined in
forward is clean) and the slot write; the same program with the attributes set directly in
LIFCell.__init__ (no super) is flagged at 0993f9c too, so the wrong belief is older than 02d3de9.
Runs under torch; gradguard reports GG003 at the training loop's backward.
"""
import torch


class SNNCell(torch.nn.Module):
    def __init__(self, activation, state_fallback):
        super().__init__()
        self.activation = activation
        self.state_fallback = state_fallback

    def forward(self, input_tensor, state=None):
        state = state if state is not None else self.state_fallback(input_tensor)
        return self.activation(input_tensor, state)


def lif_step(input_tensor, state):
    v = state + input_tensor
    z = torch.sigmoid(v)
    return z, v * (1 - z)


class LIFCell(SNNCell):
    def __init__(self):
        super().__init__(activation=lif_step, state_fallback=self.initial_state)

    def initial_state(self, input_tensor):
        return torch.zeros(input_tensor.shape)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = torch.nn.Linear(8, 16)
        self.lif0 = LIFCell()
        self.lif1 = LIFCell()
        self.lif2 = LIFCell()
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        s0, s1, s2 = None, None, None
        voltages = torch.zeros(x.shape[0], x.shape[1], 4)
        for ts in range(x.shape[0]):
            z = self.fc0(x[ts])
            z, s0 = self.lif0(z, s0)
            z, s1 = self.lif1(z, s1)
            z, s2 = self.lif2(z, s2)
            voltages[ts] = self.out(z)
        return voltages.sum(0)


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(5, 2, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()
print("ok")
