import random

import torch


class ImagePool:
    """History of generated images, so that D also sees older fakes (Shrivastava et al.)."""

    def __init__(self, pool_size):
        self.pool_size = pool_size
        self.images = []

    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images:
            image = image.unsqueeze(0)
            if len(self.images) < self.pool_size:
                self.images.append(image)
                return_images.append(image)
            elif random.uniform(0, 1) > 0.5:
                idx = random.randint(0, self.pool_size - 1)
                tmp = self.images[idx].clone()
                self.images[idx] = image
                return_images.append(tmp)
            else:
                return_images.append(image)
        return torch.cat(return_images, 0)
