"""The trainer: builds the stepper for its precision (amp.initialize first for fp16), computes
each loss and hands it to the stepper; saves amp's state with its checkpoints under fp16."""

import torch
import torch.nn.functional as F
from apex import amp

import toydata
from seq.steppers import AmpStepper, Fp32Stepper


class SequenceTrainer:
    def __init__(self, model, optimizer, math, loss_scaling, device):
        self.model = model
        self.optimizer = optimizer
        self.math = math
        self.device = device
        self.n_iter = 0
        if math == "fp32":
            self.stepper = Fp32Stepper(self.model, max_norm=1.0)
        elif math == "fp16":
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
            self.stepper = AmpStepper(
                self.model,
                1.0,
                loss_scale=loss_scaling["init_scale"],
                upscale_interval=loss_scaling["upscale_interval"],
            )

    def iterate(self, data, accumulate):
        x, y = (t.to(self.device) for t in toydata.batch(data, self.n_iter))
        prediction = self.model(x)
        loss = F.mse_loss(prediction, y)
        loss_value = loss.item()
        loss = loss / accumulate
        self.stepper.step(loss, self.optimizer, update=(self.n_iter + 1) % accumulate == 0)
        toydata.log(self.n_iter, "loss", loss_value)
        self.n_iter += 1

    def save(self, path):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "n_iter": self.n_iter}
        if self.math == "fp16":
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        checkpoint = torch.load(path, map_location=self.device)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.math == "fp16":
            amp.load_state_dict(checkpoint["amp"])
        self.n_iter = checkpoint["n_iter"]
