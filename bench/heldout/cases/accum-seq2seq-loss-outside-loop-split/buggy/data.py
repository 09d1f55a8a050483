import torch

VOCAB = 12


def reverse_pairs(n_pairs, length=5):
    """Toy translation task: the target is the reversed source sequence."""
    pairs = []
    for _ in range(n_pairs):
        src = torch.randint(1, VOCAB, (length,))
        pairs.append((src, src.flip(0)))
    return pairs
