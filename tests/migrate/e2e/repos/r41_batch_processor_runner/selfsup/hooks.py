"""The optimizer hook the distributed path builds: the loss the runner holds, divided for
gradient accumulation, goes through apex's loss scaler under fp16; the step comes every
update_interval iterations, after an optional clip."""

from mmcv.runner import OptimizerHook

try:
    import apex
except ImportError:
    print("apex is not installed")


class AccumulateStepHook(OptimizerHook):
    def __init__(self, update_interval=1, grad_clip=None, use_fp16=False):
        self.update_interval = update_interval
        self.grad_clip = grad_clip
        self.use_fp16 = use_fp16

    def before_run(self, runner):
        runner.optimizer.zero_grad()

    def after_train_iter(self, runner):
        runner.outputs["loss"] /= self.update_interval
        if self.use_fp16:
            with apex.amp.scale_loss(runner.outputs["loss"], runner.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            runner.outputs["loss"].backward()
        if self.every_n_iters(runner, self.update_interval):
            if self.grad_clip is not None:
                self.clip_grads(runner.model.parameters())
            runner.optimizer.step()
            runner.optimizer.zero_grad()
