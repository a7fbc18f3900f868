"""Hooks the task runs between the backward and the optimizer step."""

import torch


class GradClipHook:
    """Clip the gradients' norm; under torch's mixed precision, unscale them first."""

    def __init__(self, max_norm):
        self.max_norm = max_norm

    def on_backward(self, task):
        from selfsup.task import AmpType

        if task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.unscale_(task.optimizer)
        torch.nn.utils.clip_grad_norm_(task.model.parameters(), self.max_norm)
