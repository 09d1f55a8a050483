"""Sequence reversal with a GRU encoder-decoder and teacher forcing (tutorial style)."""
import random

import torch
import torch.nn as nn

from seq2seq import EOS, SOS, DecoderRNN, EncoderRNN

VOCAB, HIDDEN, SEQ_LEN, BATCH = 12, 24, 5, 8
teacher_forcing_ratio = 0.5


def random_batch():
    src = torch.randint(2, VOCAB, (BATCH, SEQ_LEN))
    tgt = torch.cat([src.flip(1), torch.full((BATCH, 1), EOS)], 1)
    return src, tgt


def train_epochs(encoder, decoder, n_epochs, batches_per_epoch, lr=5e-3):
    enc_opt = torch.optim.Adam(encoder.parameters(), lr=lr)
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(n_epochs):
        print_loss_total = 0.0
        for b in range(batches_per_epoch):
            loss = 0
            src, tgt = random_batch()
            enc_opt.zero_grad()
            dec_opt.zero_grad()
            h = encoder(src)
            dec_in = torch.full((BATCH, 1), SOS)
            use_tf = random.random() < teacher_forcing_ratio
            for di in range(tgt.size(1)):
                logits, h = decoder(dec_in, h)
                loss += criterion(logits, tgt[:, di])
                dec_in = tgt[:, di:di + 1] if use_tf else logits.argmax(-1, keepdim=True).detach()
            loss.backward()
            enc_opt.step()
            dec_opt.step()
            print_loss_total += loss.item() / tgt.size(1)
        print(f"epoch {epoch} avg loss {print_loss_total / batches_per_epoch:.4f}")
    return print_loss_total / batches_per_epoch


@torch.no_grad()
def evaluate(encoder, decoder, n=32):
    src = torch.randint(2, VOCAB, (n, SEQ_LEN))
    h = encoder(src)
    tok = torch.full((n, 1), SOS)
    outs = []
    for _ in range(SEQ_LEN):
        logits, h = decoder(tok, h)
        tok = logits.argmax(-1, keepdim=True)
        outs.append(tok)
    return (torch.cat(outs, 1) == src.flip(1)).float().mean().item()


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    encoder, decoder = EncoderRNN(VOCAB, HIDDEN), DecoderRNN(VOCAB, HIDDEN)
    avg = train_epochs(encoder, decoder, n_epochs=3, batches_per_epoch=8)
    acc = evaluate(encoder, decoder)
    param_sum = sum(p.sum().item() for m in (encoder, decoder) for p in m.parameters())
    print(f"avg loss {avg:.4f} token_acc {acc:.3f} param_sum {param_sum:.4f}")
