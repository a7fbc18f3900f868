"""auto_fp16: a decorated method of a module whose ``fp16_enabled`` is True runs under float16
autocast (the real library enters torch.cuda.amp.autocast; here autocast follows the device of
the module's parameters, so the CPU runs float16 too)."""

import functools

import torch


def auto_fp16():
    def decorate(method):
        @functools.wraps(method)
        def run(module, *args, **kwargs):
            if not getattr(module, "fp16_enabled", False):
                return method(module, *args, **kwargs)
            device = next(module.parameters()).device.type
            with torch.autocast(device, dtype=torch.float16):
                return method(module, *args, **kwargs)

        return run

    return decorate
