"""Word vectors from a synthetic corpus with a CBOW objective; embeddings are kept inside the unit ball."""
import torch

from models import TiedCBOW, cbow_loss

VOCAB = 40
WINDOW = 2


def make_corpus(length):
    # a Markov chain over the vocabulary with a few strong transitions
    trans = torch.softmax(torch.randn(VOCAB, VOCAB) * 3, dim=-1)
    tokens = [0]
    for _ in range(length - 1):
        tokens.append(torch.multinomial(trans[tokens[-1]], 1).item())
    return torch.tensor(tokens)


def windows(tokens):
    ctx, tgt = [], []
    for i in range(WINDOW, len(tokens) - WINDOW):
        ctx.append(torch.cat([tokens[i - WINDOW:i], tokens[i + 1:i + WINDOW + 1]]))
        tgt.append(tokens[i])
    return torch.stack(ctx), torch.stack(tgt)


def main():
    torch.manual_seed(43)
    context, target = windows(make_corpus(600))
    model = TiedCBOW(VOCAB)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(4):
        perm = torch.randperm(context.size(0))
        for i in range(0, context.size(0), 64):
            idx = perm[i:i + 64]
            logits, h, target_vec = model(context[idx], target[idx])
            loss = cbow_loss(logits, h, target_vec, target[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss.item():.4f} max_norm {model.emb.weight.norm(dim=1).max().item():.4f} "
          f"param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
