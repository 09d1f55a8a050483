import torch

__all__ = ["batchify", "get_batch", "synthetic_corpus"]


def synthetic_corpus(n_tokens, ntoken, seed=0):
    g = torch.Generator().manual_seed(seed)
    # a noisy "grammar": next token is mostly (prev * 3 + 1) mod ntoken
    ids = [0]
    for _ in range(n_tokens - 1):
        if torch.rand(1, generator=g).item() < 0.8:
            ids.append((ids[-1] * 3 + 1) % ntoken)
        else:
            ids.append(int(torch.randint(ntoken, (1,), generator=g)))
    return torch.tensor(ids)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[: nbatch * bsz].view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)
