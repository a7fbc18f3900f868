"""apex O1's cast lists, as data.

apex kept these lists in ``apex.amp.lists`` and patched every function on them.  apexcompat
does not patch torch: O1 runs under ``torch.autocast``, whose own lists mostly agree (spec
§10.1).  The lists are kept here to document apex's policy, to compute the remaining
differences, and to drive the optional CPU float32 fix-ups.

Names are attribute names of the namespace each list belongs to (``torch.nn.functional``,
``torch``, ``torch.Tensor``).
"""

from __future__ import annotations

from typing import Dict, Tuple

# --- cast to fp16 ------------------------------------------------------------------------

FP16_FUNCS_FUNCTIONAL: Tuple[str, ...] = (
    "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "linear",
)

FP16_FUNCS_TORCH: Tuple[str, ...] = (
    "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "prelu", "addmm", "addmv", "addr", "matmul", "mm", "mv",
)

FP16_FUNCS_TENSOR: Tuple[str, ...] = FP16_FUNCS_TORCH + ("__matmul__",)

# On the fp16 lists only when the torch build's CUDA version is >= 9.1 (never on a CPU
# build, which is why the golden trace records ``torch.bmm`` as float32).
FP16_FUNCS_CUDA_91: Tuple[str, ...] = ("bmm", "baddbmm", "addbmm")

# RNN backends and cells apex cast to fp16 through a flat fp16 weight buffer.
FP16_RNN_FUNCS: Tuple[str, ...] = (
    "RNN_TANH", "RNN_RELU", "GRU", "LSTM",
    "RNNTanhCell", "RNNReLUCell", "GRUCell", "LSTMCell",
)

# --- cast to fp32 ------------------------------------------------------------------------

FP32_FUNCS_FUNCTIONAL: Tuple[str, ...] = (
    "interpolate", "grid_sample", "softplus", "softmin", "log_softmax", "softmax", "gelu",
    "layer_norm", "group_norm", "local_response_norm", "normalize", "cosine_similarity",
    "poisson_nll_loss", "cosine_embedding_loss", "cross_entropy", "hinge_embedding_loss",
    "kl_div", "l1_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "nll_loss",
    "binary_cross_entropy_with_logits", "smooth_l1_loss", "soft_margin_loss",
    "triplet_margin_loss", "ctc_loss",
)

FP32_FUNCS_TORCH: Tuple[str, ...] = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "reciprocal",
    "rsqrt", "sinh", "tan", "pow", "cumprod", "cumsum", "dist", "norm", "prod", "std", "sum",
    "var", "renorm",
)

FP32_FUNCS_TENSOR: Tuple[str, ...] = FP32_FUNCS_TORCH + ("__pow__", "__rpow__", "__ipow__", "cpu")

# --- promote to the widest floating type ----------------------------------------------------

PROMOTE_FUNCS_TORCH: Tuple[str, ...] = (
    "addcdiv", "addcmul", "atan2", "cross", "bilinear", "dot",
    "add", "div", "mul", "eq", "equal", "ge", "gt", "le", "lt", "ne",
)

PROMOTE_FUNCS_TENSOR: Tuple[str, ...] = PROMOTE_FUNCS_TORCH + (
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
    "__mul__", "__rmul__", "__imul__", "__div__", "__rdiv__", "__idiv__",
    "__truediv__", "__rtruediv__", "__itruediv__",
    "__eq__", "__ne__", "__ge__", "__gt__", "__le__", "__lt__",
)

SEQUENCE_PROMOTE_FUNCS_TORCH: Tuple[str, ...] = ("cat", "stack")

# --- banned with fp16 inputs ---------------------------------------------------------------

BANNED_FUNCS_FUNCTIONAL: Tuple[str, ...] = ("binary_cross_entropy",)

BANNED_BCE_MESSAGE = (
    "\namp does not work out-of-the-box with `F.binary_cross_entropy` or `torch.nn.BCELoss.` "
    "It requires that the output of the previous function be already a FloatTensor. \n\n"
    "Most models have a Sigmoid right before BCELoss. In that case, you can use\n"
    "    torch.nn.BCEWithLogitsLoss\n"
    "to combine Sigmoid+BCELoss into a single layer that is compatible with amp.\n"
    "Another option is to add\n"
    "    amp.register_float_function(torch, 'sigmoid')\n"
    "before calling `amp.init()`.\n"
    "If you _really_ know what you are doing, you can disable this warning by passing "
    "allow_banned=True to `amp.init()`."
)

# --- torch.autocast's own float32 policy -----------------------------------------------------
#
# Names (in apex's spelling) of the ops that CUDA autocast runs in float32 -- its fp32 list
# and its fp32-unless-a-dtype-is-given list (spec §10.1).  Losses computed through
# log_softmax/nll_loss (cross_entropy) count as float32.  Read from the generic (CUDA)
# autocast lists of torch 2.13's ATen/autocast_mode.h.

AUTOCAST_FP32_CUDA: Tuple[str, ...] = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow", "__pow__", "__rpow__", "softplus",
    "layer_norm", "rms_norm", "group_norm", "norm", "cosine_similarity",
    "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div",
    "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "binary_cross_entropy_with_logits", "cross_entropy", "dist", "pdist", "cdist", "renorm",
    "logsumexp", "prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum",
    "interpolate",  # every upsample_* kernel F.interpolate dispatches to
    # composites whose result is fp32 because an inner op is (softmax, norm, pow, sum)
    "softmin", "normalize", "local_response_norm", "multilabel_soft_margin_loss",
)

# --- CPU float32 fix-ups ----------------------------------------------------------------------
#
# Ops that CUDA float16 autocast runs in float32 (as apex did) but CPU float16 autocast
# leaves in float16, measured on torch 2.13 (see tests/shim/test_o1_op_dtypes.py).  The
# optional CPU fix-up mode (``apexcompat._autocast.set_cpu_fp32_fixups``) casts their
# floating inputs to float32.  Keys: namespace -> attribute names.

_CPU_KEPT_HALF_TORCH: Tuple[str, ...] = (
    "softmax", "log_softmax", "exp", "expm1", "log", "log10", "log2", "log1p", "acos", "asin",
    "cosh", "sinh", "tan", "erfinv", "reciprocal", "rsqrt", "pow", "sum", "cumsum", "cumprod",
    "norm", "renorm", "logsumexp", "dist",
)

CPU_FP32_FIXUPS: Dict[str, Tuple[str, ...]] = {
    "torch.nn.functional": (
        "softmax", "log_softmax", "layer_norm", "group_norm", "softplus", "cosine_similarity",
        "interpolate", "softmin", "normalize", "local_response_norm",
        "multilabel_soft_margin_loss",
    ),
    "torch": _CPU_KEPT_HALF_TORCH + ("layer_norm", "group_norm", "cosine_similarity"),
    "torch.Tensor": _CPU_KEPT_HALF_TORCH + ("__pow__", "__rpow__"),
}

# apex fp16-list ops that CPU autocast leaves in fp32 (CUDA autocast: fp16), and apex promote
# ops that CPU autocast does not promote (mixed fp16/fp32 inputs raise; CUDA promotes).
CPU_HALF_FIXUPS: Dict[str, Tuple[str, ...]] = {
    "torch": ("mv", "addmv", "addr"),
    "torch.Tensor": ("mv", "addmv", "addr"),
}
CPU_PROMOTE_FIXUPS: Dict[str, Tuple[str, ...]] = {
    "torch": ("dot", "vdot", "cross", "bilinear", "tensordot"),
    "torch.Tensor": ("dot", "vdot", "cross"),
}

#: Every op name the CPU float32 fix-ups cover (apex spelling).
CPU_KEPT_HALF: Tuple[str, ...] = tuple(
    sorted({name for names in CPU_FP32_FIXUPS.values() for name in names})
)
