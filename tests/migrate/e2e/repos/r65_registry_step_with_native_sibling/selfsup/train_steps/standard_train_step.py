"""The standard train step: called with the task, it runs one forward, backward and update.

The task says which mixed precision runs (its amp_type): apex's, with the loss scaled by
apex.amp, or torch's, with the GradScaler the task keeps; the hooks run between the backward
and the optimizer step.
"""

import contextlib

import torch
import torch.nn.functional as F

from selfsup.task import AmpType
from selfsup.train_steps import register_train_step
from selfsup.util import is_apex_available

if is_apex_available():
    import apex


@register_train_step("standard_train_step")
class StandardTrainStep:
    def __call__(self, task):
        x, y = task.next_batch()
        with torch.enable_grad(), self.create_amp_context(task):
            output = task.model(x)
            local_loss = F.mse_loss(output, y)
        task.losses.append(local_loss.item())
        self.run_backward(task, local_loss)
        task.run_hooks("on_backward")
        self.run_optimizer_step(task)
        task.iteration += 1
        return task

    @staticmethod
    def create_amp_context(task):
        return (
            torch.autocast(task.device, dtype=torch.float16)
            if task.amp_type == AmpType.PYTORCH
            else contextlib.suppress()
        )

    @staticmethod
    def run_backward(task, local_loss):
        task.optimizer.zero_grad()
        if task.amp_type == AmpType.APEX:
            with apex.amp.scale_loss(local_loss, task.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.scale(local_loss).backward()
        else:
            local_loss.backward()

    @staticmethod
    def run_optimizer_step(task):
        if task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.step(task.optimizer)
            task.amp_grad_scaler.update()
        else:
            task.optimizer.step()
