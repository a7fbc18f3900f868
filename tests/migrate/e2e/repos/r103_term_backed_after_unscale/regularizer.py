"""An EWC-like penalty: each parameter's square, weighted by its squared gradient of this step
(the Fisher information); nothing carried across steps, so a resumed run matches."""

import torch


class EWC:
    def __init__(self, model):
        self.model = model
        self.fisher = {n: torch.zeros_like(p) for n, p in model.named_parameters()}

    def update(self):
        for n, p in self.model.named_parameters():
            if p.grad is not None:
                self.fisher[n] = (p.grad.detach() ** 2).mean()

    def penalty(self):
        total = 0.0
        for n, p in self.model.named_parameters():
            total = total + (self.fisher[n] * p ** 2).sum()
        return total
