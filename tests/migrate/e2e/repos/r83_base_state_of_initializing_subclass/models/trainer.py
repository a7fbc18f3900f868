"""The trainer (DL-Art-School's ExtensibleTrainer): it derives from BaseModel, builds one
training step per entry of the options (each with a network and an optimizer of its own), and
initializes apex in its own __init__, one loss scaler per step, when the options name an opt
level."""

import torch.nn as nn
from apex import amp

import toydata
from models.base_model import BaseModel
from models.steps import ConfigurableStep


class ExtensibleTrainer(BaseModel):
    def __init__(self, opt):
        super(ExtensibleTrainer, self).__init__(opt)
        self.env = {"device": self.device, "step": 0}
        self.net = nn.ModuleList([toydata.make_mlp() for _ in opt["steps"]]).to(self.device)
        self.steps = []
        for index, step_opt in enumerate(opt["steps"]):
            step_opt = dict(step_opt, params=self.net[index].parameters())
            self.steps.append(ConfigurableStep(step_opt, self.env))
        for s in self.steps:
            self.optimizers.append(s.optimizer)
        if "amp_opt_level" in opt:
            self.env["amp"] = True
            self.net, self.optimizers = amp.initialize(self.net, self.optimizers, opt_level=opt["amp_opt_level"],
                                                       num_losses=len(opt["steps"]), verbosity=0)
        else:
            self.env["amp"] = False

    def optimize_parameters(self, x, y, spike):
        loss = None
        for loss_id, s in enumerate(self.steps):
            # only the first step's loss blows up: its own loss scaler overflows there
            loss = s.do_forward_backward(self.net[loss_id], x, y, loss_id, spike and loss_id == 0)
            s.do_step()
        return loss
