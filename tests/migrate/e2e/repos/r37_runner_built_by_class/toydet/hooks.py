"""The optimizer hook used with fp16: the loss the runner holds goes through apex's loss scaler."""

from mmcv.runner import HOOKS, OptimizerHook

try:
    from apex import amp
except ImportError:
    print("apex is not installed")


@HOOKS.register_module()
class AmpOptimizerHook(OptimizerHook):
    def __init__(self, grad_clip=None, use_fp16=False):
        super().__init__(grad_clip)
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        if self.use_fp16:
            with amp.scale_loss(runner.outputs["loss"], runner.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            runner.outputs["loss"].backward()
        if self.grad_clip is not None:
            self.clip_grads(runner.model.parameters())
        runner.optimizer.step()
