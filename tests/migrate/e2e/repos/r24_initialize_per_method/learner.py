"""A learner class in the shape of NLP fine-tuning libraries: ``find_lr`` runs a learning-rate
range test and ``fit`` trains; each builds its own optimizer and, with fp16 on, hands it to
apex's initialize together with the model, so apex's loss scaler starts afresh in each.
``find_lr`` scales its losses in a one-batch helper only it calls; ``fit`` scales its own and
keeps the loss scaler's state in its checkpoints."""

import torch

import toydata

try:
    from apex import amp

    HAS_APEX = True
except ImportError:
    HAS_APEX = False


class Learner:
    def __init__(self, model, fp16, opt_level="O1"):
        self.model = model
        self.fp16 = fp16 and HAS_APEX
        self.opt_level = opt_level

    def find_lr(self, data, device, start_lr=1e-3, end_lr=1.0, iterations=8):
        """Raise the learning rate geometrically over a few batches, log each loss, then put
        the weights back as they were; returns the rate of the lowest loss."""
        kept = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        optimizer = torch.optim.SGD(self.model.parameters(), lr=start_lr)
        if self.fp16:
            self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=self.opt_level, verbosity=0)
        factor = (end_lr / start_lr) ** (1.0 / iterations)
        rates, losses = [], []
        for idx in range(iterations):
            rates.append(optimizer.param_groups[0]["lr"])
            losses.append(self._range_test_batch(optimizer, data, device, idx))
            toydata.log(idx, "lr_loss", losses[-1])
            for group in optimizer.param_groups:
                group["lr"] *= factor
        self.model.load_state_dict(kept)
        return rates[losses.index(min(losses))]

    def _range_test_batch(self, optimizer, data, device, idx):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        if self.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        return loss.item()

    def fit(self, data, device, lr, start, steps, resume="", ckpt_out=""):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        if self.fp16:
            self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=self.opt_level, verbosity=0)
        if resume:
            checkpoint = torch.load(resume, map_location="cpu")
            self.model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            if self.fp16:
                amp.load_state_dict(checkpoint["amp"])
            start = checkpoint["step"]
        self.model.train()
        for idx in range(start, start + steps):
            x, y = (t.to(device) for t in toydata.batch(data, idx))
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            if self.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
            toydata.log(idx, "loss", loss.item())
        if ckpt_out:
            state = {"model": self.model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + steps}
            if self.fp16:
                state["amp"] = amp.state_dict()
            torch.save(state, ckpt_out)
