"""A training loop already moved to torch.amp by its authors: the loss is computed under
autocast and scaled by the loop's own GradScaler, whose state the caller checkpoints.  No
apex in here: the migration must leave this file alone."""

import torch

import toydata


def fit(model, optimizer, data, device, start, steps, use_amp=False, scaler_state=None):
    criterion = torch.nn.MSELoss()
    scaler = torch.amp.GradScaler(device, enabled=use_amp)
    if scaler_state:
        scaler.load_state_dict(scaler_state)
    model.train()
    for idx in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        optimizer.zero_grad()
        outputs = model(x)
        with torch.autocast(device, dtype=torch.float16, enabled=use_amp):
            loss = criterion(outputs.float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        toydata.log(idx, "loss", loss.item())
    return scaler
