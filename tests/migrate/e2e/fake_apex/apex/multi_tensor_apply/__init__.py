"""TEST-ONLY stand-in for ``apex.multi_tensor_apply`` (see ../../README.md).

``multi_tensor_applier(op, flag, lists, *args)`` hands ``op`` a chunk size, the flag and the
lists, as apex's applier does; ``available`` is True because the stand-in kernels of
``amp_C`` (../../amp_C.py) run on any device.
"""


class _Applier:
    available = True
    chunk_size = 2048 * 32

    def __call__(self, op, noop_flag, tensor_lists, *args):
        return op(self.chunk_size, noop_flag, tensor_lists, *args)


multi_tensor_applier = _Applier()
