"""RNN regressor: predict cos(t) from sin(t), one window of the signal per step.

The hidden state of the last window is handed to the next window, so the model
sees one continuous signal instead of independent chunks.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

TIME_STEP = 10
INPUT_SIZE = 1
HIDDEN_SIZE = 16
LR = 0.02
STEPS = 40


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(
            input_size=INPUT_SIZE,
            hidden_size=HIDDEN_SIZE,
            num_layers=1,
            batch_first=True,
        )
        self.out = nn.Linear(HIDDEN_SIZE, 1)

    def forward(self, x, h_state):
        # x (batch, time_step, input_size), h_state (n_layers, batch, hidden_size)
        r_out, h_state = self.rnn(x, h_state)
        outs = self.out(r_out)
        return outs, h_state


rnn = RNN()
optimizer = torch.optim.Adam(rnn.parameters(), lr=LR)
loss_func = nn.MSELoss()

h_state = None  # the first window starts from zeros

for step in range(STEPS):
    start, end = step * math.pi, (step + 1) * math.pi
    steps = torch.linspace(start, end, TIME_STEP)
    x = torch.sin(steps).view(1, TIME_STEP, INPUT_SIZE)
    y = torch.cos(steps).view(1, TIME_STEP, 1)

    prediction, h_state = rnn(x, h_state)
    h_state = h_state.detach()

    loss = loss_func(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

param_sum = sum(p.sum().item() for p in rnn.parameters())
print(f"final loss {loss.item():.6f} param_sum {param_sum:.6f}")
