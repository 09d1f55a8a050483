import torch
import torch.nn as nn


class MultiSensorEncoder(nn.Module):
    """One GRU cell per sensor, fused by a linear head."""

    def __init__(self, sensor_dims, hidden=16):
        super().__init__()
        self.cells = nn.ModuleDict({name: nn.GRUCell(dim, hidden) for name, dim in sensor_dims.items()})
        self.fuse = nn.Linear(hidden * len(sensor_dims), 1)
        self.hidden = hidden

    def initial_states(self, batch_size):
        return {name: torch.zeros(batch_size, self.hidden) for name in self.cells}

    def step(self, inputs, states):
        new_states = {name: cell(inputs[name], states[name]) for name, cell in self.cells.items()}
        fused = torch.cat([new_states[name] for name in self.cells], dim=-1)
        return self.fuse(fused).squeeze(-1), new_states
