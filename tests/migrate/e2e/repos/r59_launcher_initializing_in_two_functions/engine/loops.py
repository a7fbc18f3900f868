"""The training loops the launcher's two set-ups call: a plain one, and one that also trains a
gate in front of the model against the model's loss (two losses, two optimizers, each scaled
and stepped on its own).  apex.amp scales here; it is set up in the launcher."""

import torch.nn.functional as F
from apex import amp

import toydata


def fit(model, optimizer, data, start, steps, device):
    for step in range(start, start + steps):
        x, y = toydata.batch(data, step)
        x, y = x.to(device), y.to(device)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        toydata.log(step, "loss", loss.item())


def fit_gated(model, gate, optimizer, gate_optimizer, data, start, steps, device):
    for step in range(start, start + steps):
        x, y = toydata.batch(data, step)
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = F.mse_loss(model(gate(x)), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        gate_optimizer.zero_grad()
        gate_loss = 0.1 * F.mse_loss(model(gate(x)), y)
        with amp.scale_loss(gate_loss, gate_optimizer) as scaled_gate_loss:
            scaled_gate_loss.backward()
        gate_optimizer.step()
        toydata.log(step, "loss", loss.item())
