"""The trainers' base class: it sets up mixed precision for the three networks and their
optimizers (one apex loss scaler per loss id), and scales each loss in a backward method of
its own, under the fp16 switch; stepping the optimizers is left to the subclasses, which
drive the iterations.  The auxiliary classifier's loss trains the generator too, so its
backward scales for both optimizers."""

import contextlib

import torch

try:
    from apex import amp
except ImportError:
    print("failed to import apex")


@contextlib.contextmanager
def frozen(module):
    """No gradient reaches ``module``'s parameters inside the block."""
    flags = [p.requires_grad for p in module.parameters()]
    for p in module.parameters():
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in zip(module.parameters(), flags):
            p.requires_grad_(flag)


class BaseTrainer:
    def __init__(self, gen, disc, aux, g_optim, d_optim, ac_optim, cfg, device):
        self.cfg = cfg
        self.device = device
        self.gen, self.disc, self.aux = gen, disc, aux
        self.g_optim, self.d_optim, self.ac_optim = g_optim, d_optim, ac_optim
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim], num_losses=3,
            level=cfg.opt_level,
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O1"):
        models = [m.to(self.device) for m in models]
        if self.cfg.fp16:
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses, verbosity=0)
        return models, opts

    def clear_losses(self):
        values = {k: v.item() for k, v in {**self.g_losses, **self.d_losses, **self.ac_losses}.items()}
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}
        return values

    def d_backward(self):
        with frozen(self.gen):
            d_loss = sum(self.d_losses.values())
            if self.cfg.fp16:
                with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                    scaled_d_loss.backward()
            else:
                d_loss.backward()

    def g_backward(self):
        with frozen(self.disc):
            g_loss = sum(self.g_losses.values())
            if self.cfg.fp16:
                with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                    scaled_g_loss.backward()
            else:
                g_loss.backward()

    def ac_backward(self):
        if "ac" not in self.ac_losses:
            return
        if self.cfg.fp16:
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)

    def save(self, path, step):
        state = {
            "gen": self.gen.state_dict(), "disc": self.disc.state_dict(), "aux": self.aux.state_dict(),
            "g_optim": self.g_optim.state_dict(), "d_optim": self.d_optim.state_dict(),
            "ac_optim": self.ac_optim.state_dict(), "step": step,
        }
        if self.cfg.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        ckpt = torch.load(path, map_location="cpu")
        self.gen.load_state_dict(ckpt["gen"])
        self.disc.load_state_dict(ckpt["disc"])
        self.aux.load_state_dict(ckpt["aux"])
        self.g_optim.load_state_dict(ckpt["g_optim"])
        self.d_optim.load_state_dict(ckpt["d_optim"])
        self.ac_optim.load_state_dict(ckpt["ac_optim"])
        if self.cfg.fp16 and "amp" in ckpt:
            amp.load_state_dict(ckpt["amp"])
        return ckpt["step"]
