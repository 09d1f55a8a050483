import torch
import torch.nn.functional as F


def fit(model, stream, optimizer, seq_len, epochs, log_every=10):
    batch = stream.size(0)
    for epoch in range(epochs):
        model.reset_state(batch)
        total, n = 0.0, 0
        for i in range(0, stream.size(1) - seq_len - 1, seq_len):
            x = stream[:, i:i + seq_len]
            y = stream[:, i + 1:i + 1 + seq_len]
            model.detach_state()
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
            n += 1
            if n % log_every == 0:
                print(f"epoch {epoch} chunk {n} loss {total / n:.4f}")
    return total / n
