import torch.nn as nn
import torch.nn.functional as F


class TiedCBOW(nn.Module):
    """Continuous bag of words with max-norm embeddings tied to the output layer."""

    def __init__(self, vocab, dim=16, max_norm=1.0):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, max_norm=max_norm)
        self.bias = nn.Parameter(0.01 * self.emb.weight.new_zeros(vocab))

    def forward(self, context, target):
        h = self.emb(context).mean(dim=1)
        # nn.Embedding(max_norm=...) renormalises rows of the weight in place on every lookup:
        # use a clone of the weight in differentiable ops (see the nn.Embedding docs)
        logits = h @ self.emb.weight.clone().T + self.bias
        target_vec = self.emb(target)
        return logits, h, target_vec


def cbow_loss(logits, h, target_vec, target, align=0.1):
    return F.cross_entropy(logits * 5.0, target) + align * (1 - F.cosine_similarity(h, target_vec)).mean()
