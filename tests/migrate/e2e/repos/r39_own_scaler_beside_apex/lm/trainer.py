"""Trainer with two mixed-precision branches (facebookresearch/CodeGen's Trainer): --fp16 with
--apex 0 keeps its own GradScaler as self.scaler; --fp16 with --apex 1 sets up apex in
init_amp_apex() when --amp >= 0.  optimize() branches on the same flags; the checkpoint keeps
the GradScaler's state under "scaler" and apex's under "amp", each only on its own branch, and
the reload asserts there is no "scaler" entry where the trainer has no GradScaler of its own."""

import torch
import torch.nn.functional as F

import toydata


class Trainer:
    def __init__(self, model, optimizer, params):
        self.params = params
        self.model = model
        self.optimizer = optimizer
        self.n_iter = 0
        self.scaler = None
        if params.fp16 and not params.apex:
            self.scaler = torch.amp.GradScaler(params.device)
        if params.amp >= 0 and params.apex:
            self.init_amp_apex()

    def init_amp_apex(self):
        from apex import amp

        params = self.params
        assert params.amp == 0 and not params.fp16 or params.amp in [1, 2, 3] and params.fp16
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O%i" % params.amp)

    def optimize(self, loss):
        params = self.params
        self.optimizer.zero_grad()
        if not params.fp16:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), params.clip_grad_norm)
            self.optimizer.step()
        elif params.apex:
            from apex import amp

            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), params.clip_grad_norm)
            self.optimizer.step()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), params.clip_grad_norm)
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def save_checkpoint(self, path):
        from apex import amp

        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "n_iter": self.n_iter}
        if self.scaler is not None:
            state["scaler"] = self.scaler.state_dict()
        if self.params.fp16 and self.params.apex:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def reload_checkpoint(self, path):
        from apex import amp

        checkpoint = torch.load(path, map_location=self.params.device)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.scaler is not None:
            self.scaler.load_state_dict(checkpoint["scaler"])
        else:
            assert "scaler" not in checkpoint
        if self.params.fp16 and self.params.apex:
            amp.load_state_dict(checkpoint["amp"])
        self.n_iter = checkpoint["n_iter"]


class RegressionTrainer(Trainer):
    def regression_step(self, data):
        x, y = (t.to(self.params.device) for t in toydata.batch(data, self.n_iter))
        self.model.train()
        prediction = self.model(x)
        loss = F.mse_loss(prediction.float(), y)
        self.optimize(loss)
        toydata.log(self.n_iter, "loss", loss.item())
        self.n_iter += 1
