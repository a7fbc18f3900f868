"""The training loop; mixed precision when the launcher hands it apex.amp as ``amp``."""

import torch
import torch.nn.functional as F

import toydata


def train_one_epoch(model, data, optimizer, device, start, steps, max_norm: float = 0, amp: object = None):
    model.train()
    for step in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)

        # backprop
        optimizer.zero_grad()
        if amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        # clip norm
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)

        optimizer.step()
        toydata.log(step, "loss", loss.item())
