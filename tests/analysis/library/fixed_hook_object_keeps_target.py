"""Match a reference image's features: an image is optimised so that the activations of chosen
layers, read by hook objects, match those the reference image gave."""

import torch
import torch.nn as nn

torch.manual_seed(0)

ITERS = 3
LR = 0.05


class Hook:
    """Keeps the last output of the module it is registered on."""

    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)
        self.output = None

    def hook_fn(self, module, input, output):
        self.output = output

    def close(self):
        self.hook.remove()


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1),
            nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.pool(self.features(x)).flatten(1)


def feature_loss(outputs, targets):
    loss = 0.0
    for out, target in zip(outputs, targets):
        loss = loss + ((out - target) ** 2).mean()
    return loss


def match_features(model, layers, reference, image, iters):
    hooks = [Hook(layer) for layer in layers]
    with torch.no_grad():
        model(reference)
    targets = []
    for hook in hooks:
        targets.append(hook.output)
    optimizer = torch.optim.Adam([image], lr=LR)
    for i in range(iters):
        optimizer.zero_grad()
        model(image)
        outputs = [hook.output for hook in hooks]
        loss = feature_loss(outputs, targets)
        loss.backward()
        optimizer.step()
        print(f"iteration {i}: loss {loss.item():.6f}")
    for hook in hooks:
        hook.close()
    return image


model = FeatureNet()
model.eval()
reference = torch.rand(1, 3, 16, 16)
image = torch.rand(1, 3, 16, 16, requires_grad=True)
result = match_features(model, [model.features[1], model.features[3]], reference, image, ITERS)
print(f"{result.sum().item():.6f}")
