"""pix2pixHD: a model returns its five losses as a list; the script names them with
`dict(zip(loss_names, losses))` and backward-s the generator's sum, then the discriminator's.

`Pix2PixHD.forward` detaches the fake image before the discriminator's fake pass (`discriminate`
takes `test_image.detach()`), the real pass reads a real image, and the feature-matching loss
detaches the real features; so `loss_D = (D_fake + D_real) * 0.5` and `loss_G = G_GAN + G_GAN_Feat`
share no node: `loss_G.backward()` frees only the generator's graph (and the discriminator pass on
the fake), and `loss_D.backward()` then runs through the two detached passes. The script also has an
fp16 arm (apex's `amp.scale_loss`, imported only under `if opt.fp16:`; here a small context manager
reached through an object bound in that branch, which the fp16 arm's finding needs).

The model believed (GG002, once per arm): `loss_D` (`scaled_loss` under fp16) is backward-ed after
`loss_G.backward()` freed the graph they share through `losses`. False: the program runs with and
without `--fp16` (checked below).

Reduces NVIDIA/pix2pixHD (14b3b3c7fff413086e3b58df52096f16b6891172) train.py:93 and train.py:95 (GG002).
"""
import contextlib
import sys

import torch
import torch.nn as nn


class Pix2PixHD(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = nn.Linear(4, 4)
        self.netD = nn.Linear(8, 1)
        self.loss_names = ['G_GAN', 'G_GAN_Feat', 'D_real', 'D_fake']
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-3)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-3)

    def discriminate(self, input_label, test_image):
        return self.netD(torch.cat((input_label, test_image.detach()), dim=1))

    def forward(self, label, image):
        fake_image = self.netG(label)
        pred_fake_pool = self.discriminate(label, fake_image)
        loss_D_fake = ((pred_fake_pool - 0.0) ** 2).mean()
        pred_real = self.discriminate(label, image)
        loss_D_real = ((pred_real - 1.0) ** 2).mean()
        pred_fake = self.netD(torch.cat((label, fake_image), dim=1))
        loss_G_GAN = ((pred_fake - 1.0) ** 2).mean()
        loss_G_GAN_Feat = (pred_fake - pred_real.detach()).abs().mean()
        return [[loss_G_GAN, loss_G_GAN_Feat, loss_D_real, loss_D_fake], fake_image]


@contextlib.contextmanager
def scale_loss(loss, optimizer, scale=128.0):
    yield loss * scale
    for group in optimizer.param_groups:
        for p in group['params']:
            if p.grad is not None:
                p.grad.div_(scale)


class Options:
    fp16 = '--fp16' in sys.argv


opt = Options()
if opt.fp16:
    import types
    amp = types.SimpleNamespace(scale_loss=scale_loss)
torch.manual_seed(0)
model = Pix2PixHD()
optimizer_G, optimizer_D = model.optimizer_G, model.optimizer_D
for step in range(3):
    label, image = torch.rand(5, 4), torch.rand(5, 4)
    losses, generated = model(label, image)
    losses = [torch.mean(x) if not isinstance(x, int) else x for x in losses]
    loss_dict = dict(zip(model.loss_names, losses))
    loss_D = (loss_dict['D_fake'] + loss_dict['D_real']) * 0.5
    loss_G = loss_dict['G_GAN'] + loss_dict.get('G_GAN_Feat', 0) + loss_dict.get('G_VGG', 0)

    optimizer_G.zero_grad()
    if opt.fp16:
        with amp.scale_loss(loss_G, optimizer_G) as scaled_loss: scaled_loss.backward()
    else:
        loss_G.backward()
    optimizer_G.step()

    optimizer_D.zero_grad()
    if opt.fp16:
        with amp.scale_loss(loss_D, optimizer_D) as scaled_loss: scaled_loss.backward()
    else:
        loss_D.backward()
    optimizer_D.step()


print('ok')
