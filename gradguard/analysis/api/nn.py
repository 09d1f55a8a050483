"""torch.nn modules: which carry parameters, what recurrent modules return, containers, wrappers,
and the methods every module has."""

from __future__ import annotations

from gradguard.analysis.api.facts import (
    Fact,
    Family,
    Receiver,
    Returns,
    Writes,
    facts,
    prefixed,
)

M = Receiver.MODULE

# The method a module's call runs (`model(x)` is `model.forward(x)`, hooks around it).
FORWARD = "forward"
# The attribute a module's code tests for its mode (`if self.training:`): True from construction,
# as `train()` and `eval()` set it on the module and every module below it.
TRAINING = "training"
# The keyword that makes an activation or dropout write its input (`nn.ReLU(inplace=True)`,
# `F.relu(x, inplace=True)`): which classes and functions take it is generated from torch.
INPLACE = "inplace"

# Any other class of torch.nn is a module (`torch.nn.Conv2d`, `torch.nn.TransformerEncoderLayer`).
FAMILIES: tuple[Family, ...] = (Family("torch.nn.", Returns.MODULE),)

FACTS: tuple[Fact, ...] = (
    *prefixed("torch.nn.", (
        "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
        "SmoothL1Loss", "HuberLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss", "CTCLoss",
        "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "SoftMarginLoss",
        "ReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LogSoftmax", "Dropout", "Identity", "Flatten",
        "LeakyReLU", "ELU", "SiLU", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "MaxPool1d", "Upsample",
        "Softplus"), returns=Returns.MODULE, parameterless=True),
    # Built with `max_norm`, their forward renormalises the rows it looks up of `weight` in place
    # (`torch.embedding_renorm_`, under no_grad): a graph that kept `weight` before (a tied output
    # layer, `h @ emb.weight.t()`) fails in its backward.
    *prefixed("torch.nn.", ("Embedding", "EmbeddingBag"), returns=Returns.MODULE,
              writes=Writes("weight", when="max_norm")),
    Fact("torch.nn.LSTM", returns=Returns.MODULE, state="tuple"),
    *prefixed("torch.nn.", ("GRU", "RNN"), returns=Returns.MODULE, state="tensor"),
    # Cells return the new state itself: `(h, c)` for an LSTM cell, `h` for the others.
    Fact("torch.nn.LSTMCell", returns=Returns.MODULE, state="cell-tuple"),
    *prefixed("torch.nn.", ("GRUCell", "RNNCell"), returns=Returns.MODULE, state="cell-tensor"),
    # Iterating a ModuleList or a Sequential gives its modules; a ModuleDict gives its keys.
    *prefixed("torch.nn.", ("ModuleList", "Sequential"), returns=Returns.MODULE, container=True, submodules="items"),
    Fact("torch.nn.ModuleDict", returns=Returns.MODULE, container=True),
    # A ModuleDict's modules, alone or with their keys (`for name, head in self.heads.items()`).
    Fact("values", M, returns=Returns.MODULE, container=True),
    Fact("items", M, returns=Returns.ITEM, container=True),
    *facts(("torch.nn.DataParallel", "torch.nn.parallel.DistributedDataParallel",
            "torch.nn.parallel.DataParallel"), returns=Returns.ARGUMENT),
    # Methods that return the module itself (`model = Net().to(device)`).
    *facts(("to", "cuda", "cpu", "float", "double", "bfloat16", "share_memory", "type", "to_empty", "xpu"), M,
           returns=Returns.RECEIVER),
    Fact("requires_grad_", M, returns=Returns.RECEIVER, sets_requires_grad=True, evidence=True),
    # Methods that show the receiver is a module.
    Fact("parameters", M, returns=Returns.PARAMETERS, evidence=True),
    Fact("named_parameters", M, returns=Returns.PARAMETERS, evidence=True, named=True),
    Fact("buffers", M, returns=Returns.BUFFERS, evidence=True),
    Fact("named_buffers", M, returns=Returns.BUFFERS),
    Fact("train", M, returns=Returns.RECEIVER, evidence=True, training=True),
    Fact("eval", M, returns=Returns.RECEIVER, evidence=True, training=False),
    *facts(("half", "apply"), M, returns=Returns.RECEIVER, evidence=True),
    *facts(("zero_grad", "load_state_dict"), M, returns=Returns.NONE, evidence=True),
    Fact("state_dict", M, returns=Returns.DATA, evidence=True),
    Fact("named_modules", M, returns=Returns.DATA, evidence=True, submodules="all", named=True),
    Fact("named_children", M, returns=Returns.DATA, submodules="children", named=True),
    Fact("modules", M, returns=Returns.DATA, evidence=True, submodules="all"),
    Fact("children", M, returns=Returns.DATA, evidence=True, submodules="children"),
    Fact(FORWARD, M, returns=Returns.UNKNOWN),
    *facts(("add_module", "get_parameter", "extra_repr"), M, returns=Returns.UNKNOWN),
    # The tensor registered is kept by the module: a buffer without grad, or a parameter.
    Fact("register_buffer", M, returns=Returns.NONE, registers=Returns.BUFFERS),
    Fact("register_parameter", M, returns=Returns.NONE, registers=Returns.PARAMETERS),
)


# Attributes every module has that its own code never sets (read, not called).
ATTRIBUTES: tuple[Fact, ...] = (
    # Its submodules by name (`self._modules.items()` in a container's forward), as a ModuleDict
    # holds them: no parameter.
    Fact("_modules", M, returns=Returns.MODULE, container=True, submodules="children"),
    # The module a wrapper holds (`DataParallel`, `DistributedDataParallel`: `model.module`), read to
    # unwrap it (`if hasattr(model, "module"): model = model.module`): the model itself, as known.
    Fact("module", M, returns=Returns.RECEIVER),
)
