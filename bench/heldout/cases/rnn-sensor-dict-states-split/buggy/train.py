"""Online altitude-rate estimation from several sensors, one GRU state per sensor."""
import torch
import torch.nn.functional as F

from models import MultiSensorEncoder
from sensors import SENSOR_DIMS, simulate

torch.manual_seed(0)

BATCH = 8
T = 48
WINDOW = 6


def slice_inputs(data, t):
    return {name: stream[t] for name, stream in data.items()}


def main():
    data, target = simulate(BATCH, T)
    model = MultiSensorEncoder(SENSOR_DIMS)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3)

    states = model.initial_states(BATCH)
    losses = []
    for t0 in range(0, T - WINDOW + 1, WINDOW):
        optimizer.zero_grad()
        loss = 0.0
        for t in range(t0, t0 + WINDOW):
            pred, states = model.step(slice_inputs(data, t), states)
            loss = loss + F.smooth_l1_loss(pred, target[t])
        loss = loss / WINDOW
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {losses[-1]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
