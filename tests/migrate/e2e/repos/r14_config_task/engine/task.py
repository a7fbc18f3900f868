"""A task that trains with apex.amp or with its own GradScaler, as its config's amp_type says."""

import contextlib
import enum

import torch
import torch.nn.functional as F
from apex import amp

from engine.util import master_params


class AmpType(enum.Enum):
    APEX = "apex"
    NATIVE = "native"


class Task:
    def __init__(self, model, optimizer, device, clip_grad=None):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.clip_grad = clip_grad
        self.amp_args = None
        self.amp_type = None
        self.native_scaler = None
        self.iteration = 0

    @classmethod
    def from_config(cls, config, model, optimizer, device):
        task = cls(model, optimizer, device, clip_grad=config.get("clip_grad"))
        return task.set_amp_args(config.get("amp_args"), config.get("amp_type"))

    def set_amp_args(self, amp_args, amp_type):
        """amp_args: the keywords of amp.initialize (apex) or anything (native); None: fp32."""
        self.amp_args = amp_args
        if amp_args is not None:
            self.amp_type = AmpType[amp_type.upper()]
            if self.amp_type == AmpType.NATIVE:
                self.native_scaler = torch.amp.GradScaler(self.device)
        return self

    def prepare(self):
        if self.amp_args is not None and self.amp_type == AmpType.APEX:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **self.amp_args)

    def forward_context(self):
        if self.amp_type == AmpType.NATIVE:
            return torch.autocast(self.device, dtype=torch.float16)
        return contextlib.nullcontext()

    def train_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        self.model.train()
        with self.forward_context():
            loss = F.mse_loss(self.model(x), y)
        self.run_optimizer(loss)
        self.iteration += 1
        return loss.item()

    def run_optimizer(self, loss):
        self.optimizer.zero_grad()
        if self.amp_type == AmpType.APEX:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif self.amp_type == AmpType.NATIVE:
            self.native_scaler.scale(loss).backward()
        else:
            loss.backward()
        if self.clip_grad:
            self._clip_gradients(self.clip_grad)
        if self.amp_type == AmpType.NATIVE:
            self.native_scaler.step(self.optimizer)
            self.native_scaler.update()
        else:
            self.optimizer.step()

    def _clip_gradients(self, max_norm):
        if self.amp_type == AmpType.NATIVE:
            self.native_scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(master_params(self.optimizer), max_norm)

    def get_state(self):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "iteration": self.iteration}
        if self.amp_type == AmpType.APEX:
            state["amp"] = amp.state_dict()
        elif self.native_scaler is not None:
            state["amp"] = self.native_scaler.state_dict()
        return state

    def set_state(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.iteration = state["iteration"]
        if "amp" in state:
            if self.amp_type == AmpType.APEX:
                amp.load_state_dict(state["amp"])
            else:
                self.native_scaler.load_state_dict(state["amp"])
