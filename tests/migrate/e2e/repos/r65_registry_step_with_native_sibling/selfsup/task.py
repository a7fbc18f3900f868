"""The task: model, optimizer, data and mixed precision, chosen by its config's amp_type."""

import enum
import logging

import torch

import toydata
from selfsup.hooks import GradClipHook
from selfsup.util import is_apex_available

if is_apex_available():
    import apex


class AmpType(enum.Enum):
    APEX = "apex"
    PYTORCH = "pytorch"


class SelfSupervisionTask:
    def __init__(self, config, model, optimizer, device):
        self.config = config
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.amp_args = None
        self.amp_type = None
        self.amp_grad_scaler = None
        self.iteration = 0
        self.losses = []
        self.data = toydata.make_data()
        self.hooks = [GradClipHook(config["clip_grad"])] if config.get("clip_grad") else []
        self.set_amp_args()

    def set_amp_args(self):
        """apex: amp_args are amp.initialize's keywords; pytorch: a GradScaler; off: fp32."""
        amp_params = self.config["amp_params"]
        if amp_params["use_amp"]:
            self.amp_type = AmpType[amp_params.get("amp_type", "apex").upper()]
            if self.amp_type == AmpType.APEX:
                self.amp_args = amp_params["amp_args"]
            elif self.amp_type == AmpType.PYTORCH:
                self.amp_grad_scaler = torch.amp.GradScaler(self.device)
            logging.info("AMP: %s, args %s", self.amp_type, self.amp_args)
        else:
            self.amp_args, self.amp_type = None, None

    def prepare(self):
        if self.amp_type == AmpType.APEX:
            self.model, self.optimizer = apex.amp.initialize(self.model, self.optimizer, **self.amp_args)

    def next_batch(self):
        return (t.to(self.device) for t in toydata.batch(self.data, self.iteration))

    def run_hooks(self, name):
        for hook in self.hooks:
            getattr(hook, name)(self)

    def get_state(self):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "iteration": self.iteration}
        if self.amp_type == AmpType.APEX:
            state["amp"] = apex.amp.state_dict()
        elif self.amp_grad_scaler is not None:
            state["amp"] = self.amp_grad_scaler.state_dict()
        return state

    def set_state(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.iteration = state["iteration"]
        # after amp.initialize, as apex requires
        if "amp" in state:
            if self.amp_type == AmpType.APEX:
                apex.amp.load_state_dict(state["amp"])
            else:
                self.amp_grad_scaler.load_state_dict(state["amp"])
