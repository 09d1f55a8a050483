"""CAVIA's MAML evaluation: a target read from an image loaded through a callable kept on the dataset.

Model believed: `curr_targets` carries a graph, which the `torch.autograd.grad(task_loss, params)` of
the inner update loop frees, so that the next update backward-s through a freed graph (GG007 at the
call of `run`). `curr_targets` is pixels of an image loaded from disk (`self.transform(img_path)`,
torchvision's `Compose([... ToTensor()])` in the original, `torch.load` here) and indexed by
coordinates: it has no graph at all, and `autograd.grad` with respect to `params` would not run (nor
free) a graph that does not lead to them anyway. Runs fine with no option, `--use_ordered_pixels` and
`--num_inner_updates 3`. The finding is fragile: it needs the loader held as an attribute and called
through it (`torch.load(img_path)` directly, or `self.transform = lambda p: torch.load(p)`: clean), three
dataset objects each passed to `eval` (train/valid/test; with two, or one passed three times: clean),
the calls under `if i_iter % log_interval == 0` in a loop, and the two arms of `sample_inputs`
(`order_pixels`); in the repository, also the celeba arm of the task family (with the sine family
only: clean). Reduces lmzintgraf/cavia (91f093af9d6f463ee651db533f6c2acc637c7e9f)
regression/main.py:11 (GG007 "this backward goes through `curr_targets`'s graph, which
`torch.autograd.grad` at maml.py:244 freed"): regression/maml.py `eval`, tasks_celebA.py
`CelebADataset` (images from the authors' CelebA folder).
"""
import argparse
import copy
import math
import os
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_inner_updates', type=int, default=1)
    parser.add_argument('--num_hidden_layers', type=int, nargs='+', default=[16, 16])
    parser.add_argument('--use_ordered_pixels', action='store_true', default=False)
    args = parser.parse_args()
    return args


class MamlModel(nn.Module):
    def __init__(self, n_inputs, n_outputs, n_weights):
        super(MamlModel, self).__init__()
        self.weights = []
        self.nodes_per_layer = n_weights + [n_outputs]
        prev_n_weight = n_inputs
        for i in range(len(self.nodes_per_layer)):
            stdv = 1.0 / math.sqrt(self.nodes_per_layer[i])
            w = torch.empty(prev_n_weight, self.nodes_per_layer[i]).uniform_(-stdv, stdv)
            w.requires_grad = True
            self.weights.append(w)
            prev_n_weight = self.nodes_per_layer[i]

    def forward(self, x):
        for i in range(len(self.weights) - 1):
            x = F.relu(F.linear(x, self.weights[i].t()))
        y = F.linear(x, self.weights[-1].t())
        return y


class CelebADataset:
    def __init__(self, mode):
        self.image_files = ['a.png', 'b.png', 'c.png', 'd.png']
        self.img_size = (32, 32, 3)
        self.transform = torch.load

    def sample_task(self):
        img_file = np.random.choice(self.image_files)
        img = self.get_image(img_file)
        return self.get_target_function(img)

    def get_image(self, filename):
        img_path = filename
        img = self.transform(img_path).float()
        img = img.permute(1, 2, 0)
        return img

    def get_target_function(self, img):
        def target_function(coordinates):
            c = coordinates.clone()
            c[:, 0] *= self.img_size[0]
            c[:, 1] *= self.img_size[1]
            pixel_values = img[c[:, 0].long(), c[:, 1].long(), :]
            return pixel_values
        return target_function

    def sample_inputs(self, batch_size, order_pixels):
        if order_pixels:
            flattened_indices = list(range(self.img_size[0] * self.img_size[1]))[:batch_size]
        else:
            flattened_indices = np.random.choice(self.img_size[0] * self.img_size[1], batch_size,
                                                 replace=False)
        x, y = np.unravel_index(flattened_indices, (self.img_size[0], self.img_size[1]))
        coordinates = torch.from_numpy(np.vstack((x, y)).T).float()
        return coordinates / torch.tensor([self.img_size[0], self.img_size[1]])


def run(args, log_interval=5000):
    task_family_train = CelebADataset('train')
    task_family_valid = CelebADataset('valid')
    task_family_test = CelebADataset('test')
    model_outer = MamlModel(2, 3, n_weights=args.num_hidden_layers)
    losses = []
    for i_iter in range(2):
        if i_iter % log_interval == 0:
            loss_mean, loss_conf = eval(args, copy.copy(model_outer), task_family=task_family_train,
                                        num_updates=args.num_inner_updates)
            losses.append(loss_mean)
            loss_mean, loss_conf = eval(args, copy.copy(model_outer), task_family=task_family_valid,
                                        num_updates=args.num_inner_updates)
            losses.append(loss_mean)
            loss_mean, loss_conf = eval(args, copy.copy(model_outer), task_family=task_family_test,
                                        num_updates=args.num_inner_updates)
            losses.append(loss_mean)
    return losses


def eval(args, model, task_family, num_updates, n_tasks=5):
    copy_weights = [w.clone() for w in model.weights]
    losses = []
    for t in range(n_tasks):
        model.weights = [w.clone() for w in copy_weights]
        target_function = task_family.sample_task()
        curr_inputs = task_family.sample_inputs(10, args.use_ordered_pixels)
        curr_targets = target_function(curr_inputs)
        for _ in range(1, num_updates + 1):
            curr_outputs = model(curr_inputs)
            task_loss = F.mse_loss(curr_outputs, curr_targets)
            params = [w for w in model.weights]
            grads = torch.autograd.grad(task_loss, params)
            for i in range(len(model.weights)):
                model.weights[i] = model.weights[i] - 1.0 * grads[i].detach()
        losses.append(F.mse_loss(model(curr_inputs), curr_targets).item())
    return (np.mean(losses), 0.0)


if __name__ == '__main__':
    args = parse_args()
    os.chdir(tempfile.mkdtemp())
    for name in ['a.png', 'b.png', 'c.png', 'd.png']:
        torch.save(torch.rand(3, 32, 32), name)
    run(args, log_interval=100)
    print("ok")
