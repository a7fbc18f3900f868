"""A task whose optimizer is a ScheduledOptimizer: apex.amp initializes the torch optimizer it
holds, the task steps the wrapper (``where=``: the training progress); or the task's own
GradScaler, or fp32, as its amp_type says."""

import contextlib
import enum
from typing import Optional

import torch
import torch.nn.functional as F
from apex import amp

from engine.optim import ScheduledOptimizer


class AmpType(enum.Enum):
    APEX = "apex"
    NATIVE = "native"


class Task:
    def __init__(self, model, device, total_steps, clip_grad=None, accumulate=1):
        self.model = model
        self.device = device
        self.total_steps = total_steps
        self.clip_grad = clip_grad
        self.accumulate = accumulate
        self.optimizer = None
        self.amp_args = None
        self.amp_type = None
        self.native_scaler = None
        self.iteration = 0

    def set_optimizer(self, optimizer: ScheduledOptimizer):
        self.optimizer = optimizer
        return self

    def set_amp_args(self, amp_args: Optional[dict], amp_type: str):
        """amp_args: amp.initialize's keywords (apex) or anything (native); None: fp32."""
        self.amp_args = amp_args
        if amp_args is not None:
            self.amp_type = AmpType[amp_type.upper()]
            if self.amp_type == AmpType.NATIVE:
                self.native_scaler = torch.amp.GradScaler(self.device)
        return self

    def prepare(self):
        self.optimizer.prepare(self.model.parameters())
        if self.amp_args is not None and self.amp_type == AmpType.APEX:
            self.model, self.optimizer.optimizer = amp.initialize(
                self.model, self.optimizer.optimizer, **self.amp_args
            )

    @property
    def where(self):
        return self.iteration / self.total_steps

    def train_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        self.model.train()
        native_context = (
            torch.autocast(self.device, dtype=torch.float16)
            if self.amp_type == AmpType.NATIVE
            else contextlib.nullcontext()
        )
        with torch.enable_grad(), native_context:
            output = self.model(x)
            loss = F.mse_loss(output, y)
        self.run_optimizer(loss)
        self.iteration += 1
        return loss.item()

    def run_optimizer(self, loss):
        if self.iteration % self.accumulate == 0:
            self.optimizer.zero_grad()
        if self.amp_type == AmpType.APEX:
            with amp.scale_loss(loss, self.optimizer.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif self.amp_type == AmpType.NATIVE:
            self.native_scaler.scale(loss).backward()
        else:
            loss.backward()
        if (self.iteration + 1) % self.accumulate == 0:
            if self.accumulate != 1:
                self._rescale_gradients(1.0 / self.accumulate)
            if self.clip_grad:
                self._clip_gradients(self.clip_grad)
            if self.amp_type == AmpType.NATIVE:
                self.native_scaler.step(self.optimizer, where=self.where)
                self.native_scaler.update()
            else:
                self.optimizer.step(where=self.where)

    def _rescale_gradients(self, factor):
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    param.grad.mul_(factor)

    def _clip_gradients(self, max_norm):
        if self.amp_type == AmpType.NATIVE:
            self.native_scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer.optimizer), max_norm)

    def get_state(self):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.get_state(),
                 "iteration": self.iteration}
        if self.amp_type == AmpType.APEX:
            state["amp"] = amp.state_dict()
        elif self.native_scaler is not None:
            state["amp"] = self.native_scaler.state_dict()
        return state

    def set_state(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.set_state(state["optimizer"])
        self.iteration = state["iteration"]
        if "amp" in state:
            if self.amp_type == AmpType.APEX:
                amp.load_state_dict(state["amp"])
            else:
                self.native_scaler.load_state_dict(state["amp"])
