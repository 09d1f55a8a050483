import torch.nn.functional as F

from .data import sequence_batches


def train_world_model(model, data, optimizer, seq_len, epochs):
    obs, acts, rews = data
    history = []
    for epoch in range(epochs):
        state = model.initial_state(obs.size(0))
        for o, a, r in sequence_batches(obs, acts, rews, seq_len):
            recon, pred_r, last = model.observe(o, a, state)
            loss = F.mse_loss(recon, o) + 0.5 * F.mse_loss(pred_r, r)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            state = last
            history.append(loss.item())
    return history
