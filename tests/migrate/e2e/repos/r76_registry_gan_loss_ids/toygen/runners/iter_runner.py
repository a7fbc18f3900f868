"""An iteration runner: hands each batch to the model's train_step with the runner's own GradScaler
(when configured) or the flag that apex.amp was set up, resumes and saves checkpoints."""

import torch
from torch.amp import GradScaler

import toydata
from toygen.runners.checkpoint import save_checkpoint


class IterRunner:
    def __init__(self, model, optimizer, fp16_loss_scaler=None, use_apex_amp=False):
        self.model = model
        self.optimizer = optimizer
        self.iter = 0
        self.with_fp16_grad_scaler = False
        if fp16_loss_scaler is not None:
            self.loss_scaler = GradScaler(next(model.parameters()).device.type, **fp16_loss_scaler)
            self.with_fp16_grad_scaler = True
        # apex.amp (NVIDIA) was set up for the model
        self.use_apex_amp = use_apex_amp

    def run(self, iters):
        for _ in range(iters):
            data_batch = self.model.data_batch(self.iter)
            kwargs = dict(running_status=dict(iteration=self.iter))
            if self.with_fp16_grad_scaler:
                kwargs.update(dict(loss_scaler=self.loss_scaler))
            if self.use_apex_amp:
                kwargs.update(dict(use_apex_amp=True))
            outputs = self.model.train_step(data_batch, self.optimizer, **kwargs)
            if self.with_fp16_grad_scaler:
                self.loss_scaler.update()
            for name, value in outputs["log_vars"].items():
                toydata.log(self.iter, name, value)
            self.iter += 1

    def resume(self, checkpoint, resume_optimizer=True, resume_loss_scaler=True):
        checkpoint = torch.load(checkpoint, map_location="cpu")
        self.iter = checkpoint["meta"]["iter"]
        self.model.load_state_dict(checkpoint["state_dict"])
        if "optimizer" in checkpoint and resume_optimizer:
            for k in self.optimizer.keys():
                self.optimizer[k].load_state_dict(checkpoint["optimizer"][k])

        if "loss_scaler" in checkpoint and resume_loss_scaler:
            self.loss_scaler.load_state_dict(checkpoint["loss_scaler"])

        if self.use_apex_amp:
            from apex import amp
            amp.load_state_dict(checkpoint["amp"])

    def save_checkpoint(self, filename):
        _loss_scaler = self.loss_scaler if self.with_fp16_grad_scaler else None
        save_checkpoint(self.model, filename, optimizer=self.optimizer, loss_scaler=_loss_scaler,
                        save_apex_amp=self.use_apex_amp, meta=dict(iter=self.iter))
