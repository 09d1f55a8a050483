"""Tacotron's location-sensitive attention keeps its cumulative attention on the module and resets it
under `if t == 0:` at the first decoder step of every forward.

`LSA.forward(encoder_seq_proj, query, t)` calls `init_attention` when `t == 0`, which rebinds
`self.cumulative` and `self.attention` to fresh zeros; then it reads them (`torch.cat`), sets
`self.attention = scores` and adds it in place, `self.cumulative += self.attention`. The decoder's loop
`for t in range(0, steps, self.r)` always starts at 0, so each training step's forward starts from
fresh state and the single backward per step goes through this step's graph only (`cat` saves nothing,
the convolution saves the concatenated copy, so the in-place `+=` breaks nothing either).

The model believed (GG003): `self.cumulative` carries the previous iteration's graph, which the
previous backward freed. False: the program trains (checked below).

Reduces fatchord/WaveRNN (83c08fdcd625be56244f4145f41500468974b144) train_tacotron.py:142 (GG003;
the state is in models/tacotron.py:181-203).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSA(nn.Module):
    def __init__(self, attn_dim, kernel_size=5, filters=4):
        super().__init__()
        self.conv = nn.Conv1d(2, filters, padding=(kernel_size - 1) // 2, kernel_size=kernel_size, bias=False)
        self.L = nn.Linear(filters, attn_dim, bias=True)
        self.W = nn.Linear(attn_dim, attn_dim, bias=True)
        self.v = nn.Linear(attn_dim, 1, bias=False)
        self.cumulative = None
        self.attention = None

    def init_attention(self, encoder_seq_proj):
        device = next(self.parameters()).device
        b, t, c = encoder_seq_proj.size()
        self.cumulative = torch.zeros(b, t, device=device)
        self.attention = torch.zeros(b, t, device=device)

    def forward(self, encoder_seq_proj, query, t):
        if t == 0: self.init_attention(encoder_seq_proj)
        processed_query = self.W(query).unsqueeze(1)
        location = torch.cat([self.cumulative.unsqueeze(1), self.attention.unsqueeze(1)], dim=1)
        processed_loc = self.L(self.conv(location).transpose(1, 2))
        u = self.v(torch.tanh(processed_query + encoder_seq_proj + processed_loc))
        u = u.squeeze(-1)
        scores = torch.sigmoid(u) / torch.sigmoid(u).sum(dim=1, keepdim=True)
        self.attention = scores
        self.cumulative += self.attention
        return scores.unsqueeze(-1).transpose(1, 2)


class Decoder(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.attn_net = LSA(dims)
        self.rnn = nn.GRUCell(dims, dims)
        self.out = nn.Linear(2 * dims, 1)

    def forward(self, encoder_seq, encoder_seq_proj, hidden, t):
        scores = self.attn_net(encoder_seq_proj, hidden, t)
        context = scores @ encoder_seq
        hidden = self.rnn(context.squeeze(1), hidden)
        return self.out(torch.cat([hidden, context.squeeze(1)], -1)), hidden


class Tacotron(nn.Module):
    def __init__(self, dims=8):
        super().__init__()
        self.encoder = nn.Linear(3, dims)
        self.encoder_proj = nn.Linear(dims, dims, bias=False)
        self.decoder = Decoder(dims)
        self.dims = dims
        self.r = 1

    def forward(self, x, m):
        batch_size, steps = m.size(0), m.size(-1)
        encoder_seq = self.encoder(x)
        encoder_seq_proj = self.encoder_proj(encoder_seq)
        hidden = torch.zeros(batch_size, self.dims)
        outputs = []
        for t in range(0, steps, self.r):
            out, hidden = self.decoder(encoder_seq, encoder_seq_proj, hidden, t)
            outputs.append(out)
        return torch.cat(outputs, 1)


def tts_train_loop(model, optimizer, train_set):
    for e in range(1, 3):
        for i, (x, m) in enumerate(train_set, 1):
            m_hat = model(x, m)
            loss = F.l1_loss(m_hat, m)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    torch.manual_seed(0)
    model = Tacotron()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_set = [(torch.rand(2, 5, 3), torch.rand(2, 4)) for _ in range(3)]
    tts_train_loop(model, optimizer, train_set)
    print('ok')
