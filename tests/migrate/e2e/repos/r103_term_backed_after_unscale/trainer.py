"""The training step: the model's loss first, then the regularizer's penalty, one step."""

import torch
import torch.nn.functional as F
from apex import amp

from regularizer import EWC


class Trainer:
    def __init__(self, model, device, reg_importance):
        self.model = model
        self.device = device
        self.regularizer = EWC(model)
        self.reg_importance = reg_importance

    def train_step(self, optim, x, y):
        device = self.device
        x, y = x.to(device), y.to(device)
        self.model.train()
        optim.zero_grad()
        outputs = self.model(x)
        loss = F.mse_loss(outputs, y)
        with amp.scale_loss(loss, optim) as scaled_loss:
            scaled_loss.backward()
        # the Fisher information, from the gradients the first backward left
        self.regularizer.update()
        l_reg = self.reg_importance * self.regularizer.penalty()
        if l_reg != 0.:
            with amp.scale_loss(l_reg, optim) as scaled_loss:
                scaled_loss.backward()
        optim.step()
        return loss.item()
