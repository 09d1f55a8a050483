"""Word-level LSTM language model on a synthetic token stream (truncated BPTT)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NTOKENS = 50
EMSIZE = 16
NHID = 32
BPTT = 8
BATCH_SIZE = 4


class LSTMLanguageModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers=2, dropout=0.0):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers = nlayers
        self.nhid = nhid

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


def train(model, train_data, optimizer, clip=0.25):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(BATCH_SIZE)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, BPTT)):
        data, targets = get_batch(train_data, i)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = F.cross_entropy(output.view(-1, NTOKENS), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        total_loss += loss.item()
    return total_loss / (batch + 1)


def main():
    corpus = torch.randint(0, NTOKENS, (400,))
    train_data = batchify(corpus, BATCH_SIZE)
    model = LSTMLanguageModel(NTOKENS, EMSIZE, NHID)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for epoch in range(1, 3):
        avg_loss = train(model, train_data, optimizer)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {avg_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
