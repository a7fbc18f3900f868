"""TEST-ONLY stand-in for two kernels of apex's compiled ``amp_C`` extension, in plain torch on
any device (see README.md).  Like the CUDA kernels they accumulate in float32 and raise the
flag buffer when they meet a value that is not finite."""

import torch


def multi_tensor_l2norm(chunk_size, noop_flag, tensor_lists, per_tensor=False):
    """(the L2 norm of all the tensors of the one list, shape [1]; the per-tensor norms or an
    empty tensor)."""
    squares = [t.float().pow(2).sum() for t in tensor_lists[0]]
    total = torch.stack(squares).sum().sqrt().reshape(1) if squares else torch.zeros(1)
    if not bool(torch.isfinite(total).all()):
        noop_flag.fill_(1)
    per = torch.stack([s.sqrt() for s in squares]) if per_tensor and squares else torch.empty(0)
    return total, per


def multi_tensor_scale(chunk_size, noop_flag, tensor_lists, scale):
    """Each tensor of the second list becomes the matching one of the first times ``scale``."""
    for source, target in zip(tensor_lists[0], tensor_lists[1]):
        scaled = source.float() * scale
        if not bool(torch.isfinite(scaled).all()):
            noop_flag.fill_(1)
        target.copy_(scaled)
