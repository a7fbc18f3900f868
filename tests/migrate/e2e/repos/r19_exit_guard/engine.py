"""The epoch loop: the forward pass, the loss from a helper that is also handed the model,
the loss multiplied by the world size, training stopped on a non-finite loss (an if that only
returns, between the loss and its scaled backward), then amp's scaled backward when mixed
precision is on and an optimizer step every `accumulate` batches."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


def compute_loss(pred, targets, model):
    """The loss and a detached copy for logging (``model`` would give per-layer weights)."""
    loss = torch.nn.functional.mse_loss(pred, targets)
    return loss, loss.detach()


def train_epoch(model, optimizer, data, device, start, steps, mixed_precision, accumulate, world_size):
    model.train()
    optimizer.zero_grad()
    for idx in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))

        pred = model(x)
        loss, items = compute_loss(pred, y, model)
        if world_size > 1:
            loss *= world_size  # gradients are averaged over the processes
        if not torch.isfinite(loss):
            print("non-finite loss, training stops", float(items))
            return

        if mixed_precision:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        if (idx + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
        toydata.log(idx, "loss", items)
