"""The iteration loop; amp.scale_loss when cfg.SOLVER.AMP_ENABLED."""

import torch.nn.functional as F
from apex import amp

import toydata


def train_loop(cfg, model, optimizer, data, device, start_iter=0):
    model.train()
    for iteration in range(start_iter, start_iter + cfg.SOLVER.MAX_ITER):
        x, y = (t.to(device) for t in toydata.batch(data, iteration))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        if cfg.SOLVER.AMP_ENABLED:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        toydata.log(iteration, "loss", loss.item())
