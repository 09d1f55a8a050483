"""A non-forward method of a module whose class is imported returns an int.

Model believed: `actor.noise_length()` builds a graph like a forward, the buffer built from it
carries that graph, and so does every batch it returns (in-file, the class is read: no finding).
Reduces fangwei123456/spikingjelly .../NoisySAN/hybrid_td3_cuda_norm.py:240 (GG006), :252 (GG002);
rosinality/stylegan2-pytorch projector.py:211 (`g_ema.make_noise()`, GG002).
"""
import torch
from realcode_helpers import Actor, Buffer

actor = Actor()
opt = torch.optim.SGD(actor.parameters(), lr=0.1)
buffer = Buffer(actor.noise_length())
for t in range(3):
    buffer.store(torch.randn(4).numpy())
    loss = actor(buffer.sample()).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok")
