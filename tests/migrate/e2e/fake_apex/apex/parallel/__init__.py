"""TEST-ONLY ``apex.parallel``: apex's DistributedDataParallel signature over torch's DDP.

What it approximates is written down in ../../README.md.
"""

import torch.nn.parallel


class DistributedDataParallel(torch.nn.parallel.DistributedDataParallel):
    """apex's constructor signature; gradients averaged over the world, buffers never broadcast."""

    def __init__(self, module, message_size=10000000, delay_allreduce=False, shared_param=None,
                 allreduce_trigger_params=None, retain_allreduce_buffers=False,
                 allreduce_always_fp32=False, num_allreduce_streams=1, allreduce_communicators=None,
                 gradient_average=True, gradient_predivide_factor=1.0,
                 gradient_average_split_factor=None, prof=False):
        if not gradient_average:
            raise NotImplementedError("fake apex DDP models gradient_average=True only")
        # apex reduced on the module's own device: no device_ids, as torch wants for CPU modules.
        super().__init__(module, broadcast_buffers=False)


__all__ = ["DistributedDataParallel"]
