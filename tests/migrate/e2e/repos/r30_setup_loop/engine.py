"""The fitting loop: every model in turn on each batch, its forward pass followed by an error
metric under torch.no_grad() and, with a positive max_error, a filter that drops the rows the
model is too far off on (a model with no row left skips the batch) before its loss; amp's scaled
backward when fp16 is on, then that model's optimizer step."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


def fit(models, optimizers, data, device, start, steps, fp16, max_error):
    for model in models:
        model.train()
    for idx in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        total = 0.0
        for k in range(len(models)):
            model = models[k]
            optimizer = optimizers[k]
            out = model(x)
            with torch.no_grad():
                error = (out.float() - y).abs().max(dim=1).values
            target = y
            if max_error > 0:
                keep = error < max_error
                out, target = out[keep], y[keep]
                if not len(target):
                    continue
            loss = torch.nn.functional.mse_loss(out, target)
            optimizer.zero_grad()
            if fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
            total += loss.item()
        toydata.log(idx, "loss", total)
