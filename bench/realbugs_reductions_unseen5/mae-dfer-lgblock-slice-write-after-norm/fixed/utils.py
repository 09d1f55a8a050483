"""The loss scaler (the shape of MAE-DFER's utils.NativeScalerWithGradNormCount): backward, then step."""

import torch


class LossScaler:
    def __call__(self, loss, optimizer, parameters=None):
        loss.backward()
        if parameters is not None:
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()
