"""What the model knows about torch and Python callables, by qualified name or method name."""

from __future__ import annotations

# Calls that start a backward pass over their first argument (or over the receiver for methods).
BACKWARD_FUNCTIONS = frozenset({"torch.autograd.backward"})
GRAD_FUNCTIONS = frozenset({"torch.autograd.grad"})

# Methods whose result no longer carries the receiver's graph.
CUT_METHODS = frozenset(
    {"detach", "item", "tolist", "numpy", "__float__", "__int__", "argmax", "argmin", "argsort",
     "size", "dim", "numel", "nelement", "sign", "eq", "ne", "lt", "le", "gt", "ge", "isnan",
     "isinf", "isfinite", "nonzero", "any", "all", "data_ptr", "type_as_bool", "long", "int",
     "bool", "byte", "short", "char", "stride", "element_size", "is_contiguous", "get_device"}
)
# In-place methods that cut the receiver's graph, wherever it is held.
INPLACE_CUT_METHODS = frozenset({"detach_", "zero_", "fill_", "copy_from_numpy_", "requires_grad_"})
# In-place methods that add an operation to the receiver's own graph.
INPLACE_OPS = frozenset(
    {"add_", "sub_", "mul_", "div_", "clamp_", "copy_", "addcmul_", "addcdiv_", "pow_",
     "exp_", "log_", "sigmoid_", "tanh_", "relu_", "masked_fill_", "index_add_", "scatter_",
     "scatter_add_", "normal_", "uniform_", "lerp_", "sqrt_", "neg_", "abs_", "t_", "transpose_",
     "unsqueeze_", "squeeze_", "resize_", "clamp_min_", "clamp_max_"}
)

# Builtins and library functions whose result carries no graph at all.
CUT_FUNCTIONS = frozenset(
    {"float", "int", "bool", "str", "repr", "len", "print", "isinstance", "issubclass", "hasattr",
     "id", "hash", "type", "format", "round", "abs_scalar", "torch.is_tensor", "torch.numel",
     "math.isnan", "math.isfinite", "math.isinf", "numpy.array", "numpy.asarray", "numpy.mean",
     "torch.argmax", "torch.argmin", "torch.argsort", "torch.eq", "torch.equal", "torch.isnan",
     "torch.isinf", "torch.isfinite", "torch.allclose", "torch.manual_seed", "torch.save",
     "torch.tensor", "torch.as_tensor", "torch.from_numpy", "logging.info", "logging.debug",
     "logging.warning", "open", "sorted_keys", "torch.sign", "torch.nonzero", "torch.where_cond",
     "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled"}
)

# Factories of fresh tensors: no graph unless `requires_grad=True` makes them leaves.
FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
        "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
        "rand_like", "randn_like", "randint_like", "normal", "bernoulli_fresh", "tensor",
        "as_tensor", "from_numpy", "multinomial", "poisson", "tril_indices", "triu_indices",
    )
)

PARAMETER_TYPES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# Context managers that switch graph building off (or on again) in their block.
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                     "torch.autograd.grad_mode.no_grad"})
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})

# Recurrent modules and the shape of the state they return.
RECURRENT_TUPLE_STATE = frozenset({"torch.nn.LSTM"})
RECURRENT_TENSOR_STATE = frozenset({"torch.nn.GRU", "torch.nn.RNN"})
# Cells return the new state itself: `(h, c)` for an LSTM cell, `h` for the others.
RECURRENT_TUPLE_CELLS = frozenset({"torch.nn.LSTMCell"})

# torch.nn classes without parameters: calling them only combines their inputs.
PARAMETERLESS_MODULES = frozenset(
    f"torch.nn.{name}"
    for name in (
        "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
        "KLDivLoss", "SmoothL1Loss", "HuberLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
        "TripletMarginLoss", "CTCLoss", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
        "MultiLabelSoftMarginLoss", "SoftMarginLoss", "ReLU", "Tanh", "Sigmoid", "GELU",
        "Softmax", "LogSoftmax", "Dropout", "Identity", "Flatten", "LeakyReLU", "ELU", "SiLU",
        "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "MaxPool1d", "Upsample", "Softplus",
    )
)

# Optimizers whose `step(closure)` evaluates the closure more than once.
MULTI_CLOSURE_OPTIMIZERS = frozenset({"torch.optim.LBFGS"})

# Methods that show a receiver is a torch.nn.Module (or a model wrapping one).
MODULE_EVIDENCE_METHODS = frozenset(
    {"parameters", "named_parameters", "train", "eval", "zero_grad", "state_dict",
     "load_state_dict", "modules", "children", "named_modules", "requires_grad_", "apply",
     "register_forward_hook", "register_full_backward_hook", "half", "buffers"}
)

# torch.distributions: constructing one from parameters builds graph; `sample()` does not.
DISTRIBUTION_PREFIX = "torch.distributions."

# Base classes whose training loop calls backward on what `training_step` returns.
LIGHTNING_MODULES = frozenset({"lightning.pytorch.LightningModule", "lightning.LightningModule"})
# Trainers that call backward on what an overridden method returns: (base class, method).
FRAMEWORK_BACKWARD = frozenset({("transformers.Trainer", "compute_loss"),
                                ("transformers.trainer.Trainer", "compute_loss")})

# Wrappers that hand a module through unchanged as far as graphs go.
MODULE_WRAPPERS = frozenset(
    {"torch.nn.DataParallel", "torch.nn.parallel.DistributedDataParallel", "torch.compile",
     "torch.nn.parallel.DataParallel"}
)

DATA_FUNCTIONS = frozenset(
    {"range", "torch.utils.data.DataLoader", "torch.utils.data.TensorDataset", "iter", "open",
     "torch.utils.data.random_split"}
)

# Methods every torch.nn.Module has: never a parameter of the same name.
MODULE_METHODS = MODULE_EVIDENCE_METHODS | frozenset(
    {"to", "cuda", "cpu", "float", "double", "forward", "register_buffer", "register_parameter",
     "add_module", "get_parameter", "named_children", "extra_repr", "type", "share_memory",
     "register_forward_pre_hook", "register_backward_hook", "log", "log_dict", "save_hyperparameters",
     "manual_backward", "optimizers", "lr_schedulers", "print", "configure_optimizers"}
)

# Containers of modules: iterating or indexing them gives the modules back.
MODULE_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential"})

# Tensor methods that make a fresh tensor (no graph) shaped or typed like the receiver.
FRESH_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "zero_like"})

# Operations whose backward needs no saved tensor: backward-ing through them a second time works,
# so graph nodes made by them alone never cause the error.
NON_SAVING_METHODS = frozenset(
    {"view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
     "permute", "transpose", "t", "contiguous", "expand", "expand_as", "repeat", "chunk", "split",
     "narrow", "to", "float", "double", "half", "bfloat16", "cuda", "cpu", "type", "type_as",
     "clone", "sum", "mean", "add", "sub", "neg", "movedim", "unbind", "__getitem__"}
)
NON_SAVING_FUNCTIONS = frozenset(
    f"torch.{name}" for name in ("cat", "stack", "sum", "mean", "flatten", "reshape", "squeeze",
                                 "unsqueeze", "transpose", "permute", "add", "sub", "neg", "chunk",
                                 "split", "hstack", "vstack", "concat", "concatenate", "unbind")
)

# nn.Module methods that return the module itself (`model = Net().to(device)`).
MODULE_RETURNS_SELF = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16", "requires_grad_",
     "share_memory", "apply", "type", "to_empty", "xpu", "mps"}
)

# Base classes of custom autograd functions (their forward and backward build no graph).
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})

# Top-level packages whose behaviour is known from facts, never by reading their source: an import
# from one of them is not followed into a project module of the same name.
KNOWN_PACKAGES = frozenset(
    {"torch", "torchvision", "torchaudio", "torchtext", "numpy", "scipy", "pandas", "math", "random",
     "os", "sys", "time", "json", "re", "logging", "argparse", "functools", "itertools", "collections",
     "typing", "dataclasses", "pathlib", "copy", "abc", "enum", "lightning", "pytorch_lightning",
     "transformers", "accelerate", "deepspeed", "diffusers", "mmcv", "mmengine", "tqdm", "wandb",
     "tensorboard", "matplotlib", "sklearn", "PIL", "cv2", "timm", "einops", "pytest", "unittest",
     "warnings", "contextlib", "inspect", "pickle", "shutil", "subprocess", "gym", "gymnasium"}
)
