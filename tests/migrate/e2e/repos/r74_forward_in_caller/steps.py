"""One configured training step: injectors run the network into a state dict, loss objects
read that state, and the weighted sum, divided by the accumulation count, is scaled."""

import torch
from apex import amp
from torch.nn import Module

from injectors import Generate
from losses import create_loss


class Step(Module):
    def __init__(self, name, step_opt, env, net, device):
        super().__init__()
        self.name = name
        self.device = device
        self.env = env
        self.training_net = net
        self.injectors = [Generate("x", "fake")]
        self.weights = dict(step_opt["weights"])
        self.losses = {key: create_loss(key) for key in self.weights}
        self.optimizers = []
        self.last_loss = 0.0

    def define_optimizers(self, lr):
        self.optimizers = [torch.optim.SGD(self.training_net.parameters(), lr=lr, momentum=0.9)]

    def do_forward_backward(self, state, grad_accum_step, amp_loss_id, train=True):
        local_state = {}
        for k, v in state.items():
            local_state[k] = v[grad_accum_step].to(self.device)
        self.env["training"] = train

        # the injectors add what the networks compute to the state
        for inj in self.injectors:
            if not train and inj.train_only:
                continue
            injected = inj(self.training_net, local_state)
            local_state.update(injected)

        if train and len(self.losses) > 0:
            total_loss = 0
            for loss_name, loss in self.losses.items():
                l = loss(self.training_net, local_state)
                total_loss += l * self.weights[loss_name]

            if isinstance(total_loss, torch.Tensor):
                self.last_loss = float(total_loss)
                total_loss = total_loss / self.env["mega_batch_factor"]
                if self.env["amp"]:
                    with amp.scale_loss(total_loss, self.optimizers, amp_loss_id) as scaled_loss:
                        scaled_loss.backward()
                else:
                    total_loss.backward()
        return {k: v.detach() for k, v in local_state.items()}

    def do_step(self):
        for opt in self.optimizers:
            opt.step()
