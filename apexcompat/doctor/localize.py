"""Localisation for one step: forward hooks on every module of the models record the first
module whose output is non-finite and, through hooks on those outputs, the first module
(in backward order) whose output gradient is non-finite.  Armed only after an overflow; each
hook costs a host sync, which is why it never runs on ordinary steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch

__all__ = ["Finding", "OneStepProbe", "kind_of", "nonfinite_kind"]


def nonfinite_kind(tensor: torch.Tensor) -> Optional[str]:
    """``None`` if every element is finite, else ``"nan"``, ``"inf"`` or ``"inf and nan"``
    (one host sync)."""
    flags = torch.stack([torch.isnan(tensor).any(), torch.isinf(tensor).any()]).tolist()
    return kind_of(flags[0], flags[1])


def kind_of(has_nan: bool, has_inf: bool) -> Optional[str]:
    if has_nan and has_inf:
        return "inf and nan"
    if has_nan:
        return "nan"
    if has_inf:
        return "inf"
    return None


def _floating(value: Any) -> List[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _floating(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _floating(v)]
    return []


def _dtypes(tensors: Sequence[torch.Tensor]) -> str:
    names = []
    for t in tensors:
        name = str(t.dtype).replace("torch.", "")
        if name not in names:
            names.append(name)
    return ", ".join(names) or "none"


@dataclass(frozen=True)
class Finding:
    """Where the first non-finite value appeared: ``where`` is ``"forward output"`` or
    ``"output gradient"`` or ``"input gradient"``."""

    where: str
    module: str
    module_type: str
    input_dtypes: str
    output_dtypes: str
    kind: str

    def describe(self) -> str:
        return (
            f"{self.module} ({self.module_type}; inputs {self.input_dtypes}, "
            f"outputs {self.output_dtypes}): {self.where} is {self.kind}"
        )


class OneStepProbe:
    """Hooks on ``modules`` until :meth:`disarm`; findings in ``forward`` and ``backward``.

    In the backward pass the first non-finite gradient is usually seen by two hooks at once
    (it is one module's output gradient and the next module's input gradient); the module
    whose *input* gradient it is produced it from a finite output gradient, so it is named."""

    def __init__(self, modules: Sequence[Tuple[str, torch.nn.Module]]) -> None:
        self.forward: Optional[Finding] = None
        self.saw_forward = False
        self._first_bad_grad: Optional[torch.Tensor] = None
        self._grad_findings: List[Finding] = []
        self._handles = [
            module.register_forward_hook(self._forward_hook(name)) for name, module in modules
        ]

    @property
    def backward(self) -> Optional[Finding]:
        for finding in self._grad_findings:
            if finding.where == "input gradient":
                return finding
        return self._grad_findings[0] if self._grad_findings else None

    def disarm(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _forward_hook(self, name: str):
        def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
            self.saw_forward = True
            ins, outs = _floating(inputs), _floating(output)
            info = (name, type(module).__name__, _dtypes(ins), _dtypes(outs))
            if self.forward is None:
                for tensor in outs:
                    kind = nonfinite_kind(tensor.detach())
                    if kind is not None:
                        self.forward = Finding("forward output", *info, kind)
                        break
            for where, tensors in (("output gradient", outs), ("input gradient", ins)):
                for tensor in tensors:
                    if tensor.requires_grad:
                        tensor.register_hook(self._grad_hook(where, info))

        return hook

    def _grad_hook(self, where: str, info: Tuple[str, str, str, str]):
        def hook(grad: torch.Tensor) -> None:
            first = self._first_bad_grad
            if grad is None or (first is not None and grad is not first):
                return
            kind = nonfinite_kind(grad)
            if kind is not None:
                self._first_bad_grad = grad
                self._grad_findings.append(Finding(where, *info, kind))

        return hook
