"""One optimizer step from a loss computed elsewhere, and the checkpoints of a run (the
loss scaler's state goes with them under fp16)."""

import torch


def backward_step(cfg, loss, optimizer):
    optimizer.zero_grad()
    if cfg.fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    return loss.item()


def save_state(path, model, optimizer, step, cfg):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    if cfg.fp16:
        from apex import amp

        state["amp"] = amp.state_dict()
    torch.save(state, path)


def load_state(path, model, optimizer, cfg):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if cfg.fp16:
        from apex import amp

        amp.load_state_dict(state["amp"])
    return state["step"]
