"""Training/evaluation loops, imported by s8_multi_file.py (scale_loss in another file)."""

import torch.nn.functional as F

try:
    from apex import amp
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False

import toydata


def train_one_epoch(model, optimizer, data, epoch, steps_per_epoch, use_amp):
    model.train()
    for i in range(steps_per_epoch):
        step = epoch * steps_per_epoch + i
        x, y = toydata.batch(data, step)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        toydata.log(step, "loss", loss.item())
