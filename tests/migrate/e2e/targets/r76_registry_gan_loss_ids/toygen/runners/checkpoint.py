"""Writes a checkpoint: weights, optimizers, the runner's loss scaler and apex.amp's state."""

import torch


def save_checkpoint(model, filename, optimizer=None, loss_scaler=None, save_apex_amp=False, meta=None):
    checkpoint = {"meta": dict(meta or {}), "state_dict": model.state_dict()}
    if isinstance(optimizer, dict):
        checkpoint["optimizer"] = {name: optim.state_dict() for name, optim in optimizer.items()}

    # the loss scaler of the runner's own mixed precision
    if loss_scaler is not None:
        checkpoint["loss_scaler"] = loss_scaler.state_dict()

    # the state of apex.amp
    if save_apex_amp:
        from toygen.runners import apex_amp_utils
        checkpoint["amp"] = [loss_scaler.state_dict() for loss_scaler in apex_amp_utils.grad_scalers]

    torch.save(checkpoint, filename)
