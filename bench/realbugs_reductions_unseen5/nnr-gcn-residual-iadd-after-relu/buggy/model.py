"""The recommender (the shape of NNR's model.py + userEncoders.SUE): a user encoder that runs the
clicked-news embeddings through a GCN built with the configured residual flag."""

import torch
from torch import nn

from layers import GCN


class UserEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config["num_news"], config["dim"])
        self.gcn = GCN(config["dim"], num_layers=config["gcn_layers"], residual=not config["no_gcn_residual"])

    def forward(self, history, graph):
        h = self.embed(history)
        return self.gcn(h, graph) + h


class Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.user_encoder = UserEncoder(config)
        self.news_embed = nn.Embedding(config["num_news"], config["dim"])

    def forward(self, history, graph, candidates):
        user = self.user_encoder(history, graph).mean(dim=1)            # (batch, dim)
        news = self.news_embed(candidates)                              # (batch, n, dim)
        return torch.bmm(news, user.unsqueeze(2)).squeeze(2)            # (batch, n) click logits
