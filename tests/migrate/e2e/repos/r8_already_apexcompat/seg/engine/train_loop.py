"""Training iterations with apexcompat.amp's scale_loss."""

import torch.nn.functional as F
from apexcompat import amp

import toydata

from .meters import AverageMeter


def do_train(model, optimizer, data, device, start, steps):
    meter = AverageMeter()
    model.train()
    for it in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, it))
        loss = F.smooth_l1_loss(model(x), y, beta=0.5)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        meter.update(loss.item())
        toydata.log(it, "loss", loss.item())
    return meter.avg
