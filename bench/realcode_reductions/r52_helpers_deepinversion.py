"""Helper module of r52_hook_attribute_with_a_teacher_unpacked_from_a_checkpoint.py: NVlabs/DeepInversion
deepinversion.py (`DeepInversionFeatureHook`, `DeepInversionClass.__init__` and `get_images`), reduced."""
import collections
import random

import torch
import torch.nn as nn
import torch.optim as optim


class DeepInversionFeatureHook():
    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)

    def hook_fn(self, module, input, output):
        nch = input[0].shape[1]
        mean = input[0].mean([0, 2, 3])
        var = input[0].permute(1, 0, 2, 3).contiguous().view([nch, -1]).var(1, unbiased=False)
        r_feature = torch.norm(module.running_var.data - var, 2) + torch.norm(
            module.running_mean.data - mean, 2)
        self.r_feature = r_feature


class DeepInversionClass(object):
    def __init__(self, bs=4, net_teacher=None, jitter=4, criterion=None, coefficients=dict(),
                 network_output_function=lambda x: x):
        self.net_teacher = net_teacher
        self.image_resolution = 16
        self.do_flip = True
        self.bs = bs
        self.save_every = 2
        self.jitter = jitter
        self.criterion = criterion
        self.network_output_function = network_output_function
        self.bn_reg_scale = coefficients["r_feature"]
        self.first_bn_multiplier = coefficients["first_bn_multiplier"]
        self.l2_scale = coefficients["l2"]
        self.lr = coefficients["lr"]
        self.main_loss_multiplier = coefficients["main_loss_multiplier"]
        self.loss_r_feature_layers = []
        for module in self.net_teacher.modules():
            if isinstance(module, nn.BatchNorm2d):
                self.loss_r_feature_layers.append(DeepInversionFeatureHook(module))

    def get_images(self, iterations=(4, 2)):
        net_teacher = self.net_teacher
        save_every = self.save_every
        local_rank = 0
        criterion = self.criterion
        targets = torch.LongTensor([random.randint(0, 9) for _ in range(self.bs)])
        inputs = torch.randn((self.bs, 3, self.image_resolution, self.image_resolution), requires_grad=True)
        pooling_function = nn.modules.pooling.AvgPool2d(kernel_size=2)
        iteration = 0
        for lr_it, lower_res in enumerate([2, 1]):
            lim_0, lim_1 = self.jitter // lower_res, self.jitter // lower_res
            optimizer = optim.Adam([inputs], lr=self.lr, betas=[0.5, 0.9], eps=1e-8)
            for iteration_loc in range(iterations[lr_it]):
                iteration += 1
                if lower_res != 1:
                    inputs_jit = pooling_function(inputs)
                else:
                    inputs_jit = inputs
                off1 = random.randint(-lim_0, lim_0)
                off2 = random.randint(-lim_1, lim_1)
                inputs_jit = torch.roll(inputs_jit, shifts=(off1, off2), dims=(2, 3))
                flip = random.random() > 0.5
                if flip and self.do_flip:
                    inputs_jit = torch.flip(inputs_jit, dims=(3,))
                optimizer.zero_grad()
                net_teacher.zero_grad()
                outputs = net_teacher(inputs_jit)
                outputs = self.network_output_function(outputs)
                loss = criterion(outputs, targets)
                rescale = [self.first_bn_multiplier] + [1. for _ in range(len(self.loss_r_feature_layers) - 1)]
                loss_r_feature = sum([mod.r_feature * rescale[idx] for (idx, mod) in enumerate(self.loss_r_feature_layers)])
                loss_l2 = torch.norm(inputs_jit.view(self.bs, -1), dim=1).mean()
                loss_aux = self.bn_reg_scale * loss_r_feature + self.l2_scale * loss_l2
                loss = self.main_loss_multiplier * loss + loss_aux
                if local_rank == 0:
                    if iteration % save_every == 0:
                        print("loss_r_feature", loss_r_feature.item())
                loss.backward()
                optimizer.step()
        optimizer.state = collections.defaultdict(dict)


