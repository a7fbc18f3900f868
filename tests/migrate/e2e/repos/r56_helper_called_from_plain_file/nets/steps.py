"""One optimizer step from a loss computed elsewhere, scaled by the loss scaler of the loss
id the caller names, and the checkpoints of a run (the loss scalers' state goes with them
under fp16)."""

import torch


def backward_step(cfg, loss, optimizer, loss_id):
    optimizer.zero_grad()
    if cfg.fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    return loss.item()


def save_state(path, encoder, head, opt_encoder, opt_head, step, cfg):
    state = {"encoder": encoder.state_dict(), "head": head.state_dict(), "opt_encoder": opt_encoder.state_dict(),
             "opt_head": opt_head.state_dict(), "step": step}
    if cfg.fp16:
        from apex import amp

        state["amp"] = amp.state_dict()
    torch.save(state, path)


def load_state(path, encoder, head, opt_encoder, opt_head, cfg):
    state = torch.load(path, map_location="cpu")
    encoder.load_state_dict(state["encoder"])
    head.load_state_dict(state["head"])
    opt_encoder.load_state_dict(state["opt_encoder"])
    opt_head.load_state_dict(state["opt_head"])
    if cfg.fp16:
        from apex import amp

        amp.load_state_dict(state["amp"])
    return state["step"]
