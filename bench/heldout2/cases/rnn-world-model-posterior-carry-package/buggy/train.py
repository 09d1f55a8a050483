"""Fit a latent dynamics model on one long rollout, carrying the filtered state between windows."""
import torch

from wm import LatentDynamics, train_world_model
from wm.data import rollout


def main():
    torch.manual_seed(11)
    data = rollout(steps=160, batch=8)
    model = LatentDynamics(obs_dim=4, act_dim=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = train_world_model(model, data, optimizer, seq_len=16, epochs=2)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"windows {len(history)} first {history[0]:.4f}")
    print(f"final loss {history[-1]:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
