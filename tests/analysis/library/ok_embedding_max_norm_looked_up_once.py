"""A character-level decoder trained with teacher forcing, its output layer tied to its input
embedding, whose rows are kept within a maximum norm (`max_norm`) as they are looked up: the whole
input sequence is looked up once, before the output layer uses the weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, HIDDEN, SEQ, BATCH = 20, 8, 16, 6, 4


class TiedDecoder(nn.Module):
    def __init__(self, vocab, dim, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, max_norm=1.0)
        self.cell = nn.GRUCell(dim, hidden)
        self.proj = nn.Linear(hidden, dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, tokens):
        embedded = self.embed(tokens[:, :-1])
        h = tokens.new_zeros(tokens.shape[0], self.cell.hidden_size, dtype=torch.float)
        logits = []
        for t in range(embedded.shape[1]):
            h = self.cell(embedded[:, t], h)
            logits.append(self.out(torch.tanh(self.proj(h))))
        return torch.stack(logits, dim=1)


def batches(n_batches):
    for _ in range(n_batches):
        start = torch.randint(0, VOCAB, (BATCH, 1))
        yield (start + torch.arange(SEQ)) % VOCAB


model = TiedDecoder(VOCAB, DIM, HIDDEN)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    for tokens in batches(5):
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.6f}")
