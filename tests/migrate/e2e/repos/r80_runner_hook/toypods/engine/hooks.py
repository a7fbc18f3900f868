"""Hooks: the optimization hook scales the loss the runner's step stored, clips and steps."""

from torch.nn.utils import clip_grad_norm_


class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps

        if self.mixed_precision:
            from apex import amp
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()

        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()


def clip_at_one(parameters):
    clip_grad_norm_(parameters, max_norm=1.0)
