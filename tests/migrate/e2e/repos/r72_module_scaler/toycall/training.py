"""The training library (bonito's shape): ``load_state`` moves the model, sets apex up when
asked and restores a checkpoint; ``train`` scales each loss through apex when asked, clips the
master gradients and steps; ``save_state`` keeps amp's state next to the weights.  No function
of this file calls another: the command of another module calls them in turn."""

import torch
import torch.nn as nn

import toydata

try:
    from apex import amp
except ImportError:
    pass


def load_state(path, device, model, optim, use_amp=False):
    """Move ``model`` to ``device``, initialize apex when ``use_amp``, and restore the
    checkpoint at ``path`` (if any); the step to continue from."""
    model.to(device)

    if use_amp:
        try:
            model, optimizer = amp.initialize(model, optim, opt_level="O1", verbosity=0)
        except NameError:
            print("[error]: Cannot use AMP: Apex package needs to be installed manually")
            exit(1)

    if not path:
        return 0
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optim.load_state_dict(state["optimizer"])
    if use_amp and "amp" in state:
        amp.load_state_dict(state["amp"])
    return state["step"]


def save_state(path, model, optim, step, use_amp=False):
    state = {"model": model.state_dict(), "optimizer": optim.state_dict(), "step": step}
    if use_amp:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def train(model, device, data, optimizer, start, steps, use_amp=False):
    model.train()
    max_norm = 0.5
    for step in range(start, start + steps):
        x, y = toydata.batch(data, step)
        optimizer.zero_grad()
        out = model(x.to(device))
        loss = nn.functional.mse_loss(out, y.to(device))

        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        params = amp.master_params(optimizer) if use_amp else model.parameters()
        torch.nn.utils.clip_grad_norm_(params, max_norm=max_norm)

        optimizer.step()
        toydata.log(step, "loss", loss.item())
