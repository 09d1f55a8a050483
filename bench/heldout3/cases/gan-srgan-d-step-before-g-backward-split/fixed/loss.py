import torch
import torch.nn as nn


class GeneratorLoss(nn.Module):
    def __init__(self, adv_weight=1e-3, tv_weight=2e-8):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv_weight, self.tv_weight = adv_weight, tv_weight

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        image_loss = self.mse(out_images, target_images)
        tv = (out_images[..., 1:] - out_images[..., :-1]).pow(2).mean()
        return image_loss + self.adv_weight * adversarial_loss + self.tv_weight * tv
