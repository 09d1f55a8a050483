"""Seq2seq (GRU encoder/decoder) with teacher forcing on a sequence-reversal task."""
import torch
import torch.nn as nn

from data import VOCAB, reverse_pairs
from seq2seq import SOS_token, DecoderRNN, EncoderRNN

torch.manual_seed(0)

HIDDEN = 32
N_ITERS = 30
LR = 0.05

pairs = reverse_pairs(20)
encoder = EncoderRNN(VOCAB, HIDDEN)
decoder = DecoderRNN(HIDDEN, VOCAB)
encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=LR)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=LR)
criterion = nn.NLLLoss()

print_loss_total = 0.0
loss = 0
for it in range(N_ITERS):
    input_tensor, target_tensor = pairs[it % len(pairs)]
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()

    _, encoder_hidden = encoder(input_tensor)
    decoder_input = torch.tensor([[SOS_token]])
    decoder_hidden = encoder_hidden
    target_length = target_tensor.size(0)
    for di in range(target_length):
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss += criterion(decoder_output, target_tensor[di].view(1))
        decoder_input = target_tensor[di].view(1, 1)  # teacher forcing

    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    print_loss_total += loss.item() / target_length

param_sum = sum(p.sum().item() for p in decoder.parameters())
print(f"final loss {print_loss_total / N_ITERS:.6f} param_sum {param_sum:.6f}")
