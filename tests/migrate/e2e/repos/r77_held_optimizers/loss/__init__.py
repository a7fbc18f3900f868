"""The loss: weighted terms parsed from args.loss, the adversarial one built by name at run time
(no apex here)."""

from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model=None, optimizer=None):
        super().__init__()
        self.terms = nn.ModuleDict()
        self.weight = {}
        for weighted in args.loss.split("+"):
            w, name = weighted.split("*")
            if name == "MSE":
                func = nn.MSELoss()
            else:
                m = import_module("loss.adversarial")
                func = getattr(m, "Adversarial")(args, model, optimizer)
            self.terms[name] = func
            self.weight[name] = float(w)

    def forward(self, output, target):
        total = 0
        for name, func in self.terms.items():
            if name == "ADV":
                total = total + self.weight[name] * func(output, target, training=self.training)
            else:
                total = total + self.weight[name] * func(output, target)
        return total
