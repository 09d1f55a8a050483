"""MAML on sine regression: a meta-batch of tasks per outer step, second-order inner adaptation."""
import torch
import torch.nn.functional as F
from torch.func import functional_call

from maml import Regressor, adapt, sample_task

META_ITERS = 25
META_BATCH = 4
INNER_STEPS = 2
INNER_LR = 0.02


def main():
    torch.manual_seed(2)
    model = Regressor()
    meta_opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    history = []
    for it in range(META_ITERS):
        meta_loss = 0.0
        for _ in range(META_BATCH):
            (xs, ys), (xq, yq) = sample_task(k_shot=10, n_query=10)
            fast_weights = adapt(model, dict(model.named_parameters()), xs, ys, INNER_STEPS, INNER_LR)
            meta_loss = meta_loss + F.mse_loss(functional_call(model, fast_weights, (xq,)), yq)
        meta_loss = meta_loss / META_BATCH
        meta_opt.zero_grad()
        meta_loss.backward()
        meta_opt.step()
        history.append(meta_loss.item())

    (xs, ys), (xq, yq) = sample_task(k_shot=10, n_query=50)
    adapted = adapt(model, dict(model.named_parameters()), xs, ys, INNER_STEPS, INNER_LR)
    with torch.no_grad():
        test = F.mse_loss(functional_call(model, adapted, (xq,)), yq).item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final meta_loss {history[-1]:.4f} test {test:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
