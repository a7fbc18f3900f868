"""A learning-rate probe with no apex of its own: a plain backward per rate, the fitter's
clipping method, a plain optimizer step; the weights and the rate are put back afterwards."""

import torch

import toydata


def probe(fitter, data, device, rates=(0.01, 0.03, 0.1, 0.3)):
    kept = {k: v.detach().clone() for k, v in fitter.model.state_dict().items()}
    base = [group["lr"] for group in fitter.optimizer.param_groups]
    losses = []
    for idx, rate in enumerate(rates):
        for group in fitter.optimizer.param_groups:
            group["lr"] = rate
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        fitter.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(fitter.model(x), y)
        loss.backward()
        fitter.rescale_gradients()
        fitter.optimizer.step()
        losses.append(loss.item())
    fitter.model.load_state_dict(kept)
    for group, lr in zip(fitter.optimizer.param_groups, base):
        group["lr"] = lr
    fitter.optimizer.zero_grad()
    return rates[losses.index(min(losses))]
