"""The libraries gradguard knows from facts, never by reading their source."""

from __future__ import annotations

# The library whose graphs gradguard follows.
TORCH = "torch"

# Aliases that mean the same thing to users: public names people import from several places.
ALIASES: dict[str, str] = {
    "pytorch_lightning": "lightning.pytorch",
    "lightning.pytorch.core.module": "lightning.pytorch",
    "lightning.pytorch.core": "lightning.pytorch",
    "lightning": "lightning.pytorch",
    "torch.nn.modules.module": "torch.nn",
    "torch.optim.lbfgs": "torch.optim",
}

# Top-level packages: an import from one of them is not followed into a project module of the same
# name, and an object made by one of them is no part of the user's program.
KNOWN: frozenset[str] = frozenset(
    {"torch", "torchvision", "torchaudio", "torchtext", "numpy", "scipy", "pandas", "math", "random",
     "os", "sys", "time", "json", "re", "logging", "argparse", "functools", "itertools", "collections",
     "typing", "dataclasses", "pathlib", "copy", "abc", "enum", "lightning", "pytorch_lightning",
     "transformers", "accelerate", "deepspeed", "diffusers", "mmcv", "mmengine", "tqdm", "wandb",
     "tensorboard", "matplotlib", "sklearn", "PIL", "cv2", "timm", "einops", "pytest", "unittest",
     "warnings", "contextlib", "inspect", "pickle", "shutil", "subprocess", "gym", "gymnasium", "builtins"}
)
