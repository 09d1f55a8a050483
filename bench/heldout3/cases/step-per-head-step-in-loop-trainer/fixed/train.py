import torch

from mtl import Encoder, MultiHeadTrainer, build_heads


def fake_faces(n, g):
    x = torch.randn(n, 20, generator=g)
    return x, {
        "age": x[:, 0] * 2 + 1,
        "gender": (x[:, 1] > 0).long(),
        "smile": (x[:, 2] + x[:, 3] > 0).long(),
    }


if __name__ == "__main__":
    torch.manual_seed(13)
    g = torch.Generator().manual_seed(13)
    trainer = MultiHeadTrainer(Encoder(20), build_heads())
    for it in range(25):
        x, t = fake_faces(32, g)
        trainer.step(x, t)
        if it % 8 == 0:
            print(f"it {it} " + " ".join(f"{k} {v[-1]:.3f}" for k, v in trainer.history.items()))
    x, t = fake_faces(128, g)
    ev = trainer.evaluate(x, t)
    params = list(trainer.encoder.parameters()) + list(trainer.heads.parameters())
    param_sum = sum(p.sum().item() for p in params)
    print(f"age {ev['age']:.3f} gender {ev['gender']:.4f} smile {ev['smile']:.4f} param_sum {param_sum:.4f}")
