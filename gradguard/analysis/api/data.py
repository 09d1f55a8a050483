"""torch.utils.data: datasets and loaders hand back what they were given, graph included."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Family, Returns, Role, prefixed

# Any other class of torch.utils.data is data (a Sampler, a custom Dataset base).
FAMILIES: tuple[Family, ...] = (Family("torch.utils.data.", Returns.DATA),)

FACTS: tuple[Fact, ...] = (
    # TensorDataset keeps its tensors as given: a label built from a tensor that requires grad
    # carries that graph into every batch.
    Fact("torch.utils.data.TensorDataset", returns=Returns.DATA, stores=Role.ARGUMENTS),
    *prefixed("torch.utils.data.", ("DataLoader", "random_split", "Subset", "ConcatDataset"),
              returns=Returns.DATA, stores=Role.ARGUMENTS),
    *prefixed("torch.utils.data.", ("Dataset", "IterableDataset"), returns=Returns.DATA),
    Fact("torch.utils.data.default_collate", returns=Returns.DERIVED),
)
