"""TEST-ONLY ``apex.fp16_utils``: a small, honest re-implementation of the old FP16_Optimizer API.

Enough for the simple forms scripts used: fp16 model params with fp32 master copies in the
wrapped optimizer, a static or a dynamic loss scale, ``backward(loss)``, ``clip_master_grads``,
``step()``, ``zero_grad()``, ``state_dict()``/``load_state_dict()``.  Not modelled: closures,
``update_master_grads=False`` choreography, flattened masters (see ../../README.md).
"""

import torch


class LossScaler:
    """Static scale: never reports an overflow, never changes."""

    def __init__(self, scale=1.0):
        self.cur_scale = float(scale)

    @property
    def loss_scale(self):
        return self.cur_scale

    def has_overflow(self, params):
        return False

    def update_scale(self, overflow):
        pass


class DynamicLossScaler(LossScaler):
    """Halve on overflow (floor 1), double after ``scale_window`` iterations since the last one."""

    def __init__(self, init_scale=2.0 ** 32, scale_factor=2.0, scale_window=1000):
        super().__init__(init_scale)
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window

    def has_overflow(self, params):
        return any(p.grad is not None and not torch.isfinite(p.grad).all() for p in params)

    def update_scale(self, overflow):
        if overflow:
            self.cur_scale = max(self.cur_scale / self.scale_factor, 1.0)
            self.last_overflow_iter = self.cur_iter
        elif (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
            self.cur_scale *= self.scale_factor
        self.cur_iter += 1


class FP16_Optimizer:
    """Wraps ``init_optimizer``: its fp16 params are replaced by fp32 masters it steps."""

    def __init__(self, init_optimizer, static_loss_scale=1.0, dynamic_loss_scale=False,
                 dynamic_loss_args=None, verbose=True):
        self.verbose = verbose
        self.optimizer = init_optimizer
        self.fp16_groups, self.fp32_from_fp16_groups = [], []
        for group in self.optimizer.param_groups:
            model_params, masters = [], []
            for i, param in enumerate(group["params"]):
                if param.dtype == torch.float16:
                    master = param.detach().clone().float().requires_grad_(True)
                    group["params"][i] = master
                    model_params.append(param)
                    masters.append(master)
            self.fp16_groups.append(model_params)
            self.fp32_from_fp16_groups.append(masters)
        if dynamic_loss_scale:
            self.dynamic_loss_scale = True
            self.loss_scaler = DynamicLossScaler(**(dynamic_loss_args or {}))
        else:
            self.dynamic_loss_scale = False
            self.loss_scaler = LossScaler(static_loss_scale)
        self.overflow = False
        self.first_closure_call_this_step = True

    @property
    def loss_scale(self):
        return self.loss_scaler.loss_scale

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    @property
    def state(self):
        return self.optimizer.state

    def _model_params(self):
        return [p for group in self.fp16_groups for p in group]

    def _pairs(self):
        for model_group, master_group in zip(self.fp16_groups, self.fp32_from_fp16_groups):
            yield from zip(model_group, master_group)

    def zero_grad(self, set_grads_to_None=False):
        for group in self.optimizer.param_groups:
            for p in group["params"]:
                p.grad = None
        for p in self._model_params():
            p.grad = None

    def backward(self, loss, update_master_grads=True, retain_graph=False):
        (loss.float() * self.loss_scale).backward(retain_graph=retain_graph)
        if update_master_grads:
            self.update_master_grads()

    def update_master_grads(self):
        self.overflow = self.dynamic_loss_scale and self.loss_scaler.has_overflow(self._model_params())
        if self.overflow:
            return
        for model_param, master in self._pairs():
            master.grad = None if model_param.grad is None else model_param.grad.float() / self.loss_scale

    def clip_master_grads(self, max_norm, norm_type=2):
        if self.overflow:
            return -1
        masters = [p for group in self.optimizer.param_groups for p in group["params"]]
        return torch.nn.utils.clip_grad_norm_(masters, max_norm, norm_type)

    def step(self, closure=None):
        if closure is not None:
            raise NotImplementedError("fake FP16_Optimizer: closures are not modelled")
        self.loss_scaler.update_scale(self.overflow)
        if self.overflow:
            print(f"Gradient overflow.  Skipping step, reducing loss scale to {self.loss_scale}")
            return None
        result = self.optimizer.step()
        with torch.no_grad():
            for model_param, master in self._pairs():
                model_param.copy_(master)
        return result

    def state_dict(self):
        return {
            "loss_scaler": dict(vars(self.loss_scaler)),
            "dynamic_loss_scale": self.dynamic_loss_scale,
            "overflow": self.overflow,
            "first_closure_call_this_step": self.first_closure_call_this_step,
            "optimizer_state_dict": self.optimizer.state_dict(),
            "fp32_from_fp16": self.fp32_from_fp16_groups,
        }

    def load_state_dict(self, state_dict):
        vars(self.loss_scaler).update(state_dict["loss_scaler"])
        self.dynamic_loss_scale = state_dict["dynamic_loss_scale"]
        self.overflow = state_dict["overflow"]
        self.first_closure_call_this_step = state_dict["first_closure_call_this_step"]
        self.optimizer.load_state_dict(state_dict["optimizer_state_dict"])
        with torch.no_grad():
            for current, saved in zip(self.fp32_from_fp16_groups, state_dict["fp32_from_fp16"]):
                for master, value in zip(current, saved):
                    master.copy_(value)


__all__ = ["FP16_Optimizer", "LossScaler", "DynamicLossScaler"]
