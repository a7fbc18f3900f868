"""The training loop: forward, amp-scaled backward, step."""

import torch.nn.functional as F
from apex import amp

from ..data import get_batch
from ..utils.logger import log_metric


def do_train(model, dataset, optimizer, device, start_iter, max_iter):
    model.train()
    for iteration in range(start_iter, max_iter):
        images, targets = get_batch(dataset, iteration, device)
        loss = F.mse_loss(model(images), targets)

        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

        log_metric(iteration, "loss", loss.item())
