import torch
import torch.nn as nn

SOS_token = 0


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)

    def forward(self, input_seq):
        embedded = self.embedding(input_seq).unsqueeze(1)
        return self.gru(embedded)


class DecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, token, hidden):
        output = torch.relu(self.embedding(token).view(1, 1, -1))
        output, hidden = self.gru(output, hidden)
        return torch.log_softmax(self.out(output[0]), dim=1), hidden
