"""Launcher in the shape of image-classification repositories: the opt level comes from the
command line (O0 means no amp, so apex is optional), one epoch function computes the model's
outputs first and then, depending on gradient accumulation, the loss in one of two branches,
each scaling it, clipping (or measuring) the gradient norm and stepping; checkpoints go
through utils.py."""

import argparse

import torch

import toydata
from utils import get_grad_norm, load_checkpoint, save_checkpoint

try:
    from apex import amp
except ImportError:
    amp = None


def parse_option():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp-opt-level", default="O1", choices=["O0", "O1", "O2"])
    parser.add_argument("--accumulation-steps", type=int, default=0)
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def train_one_epoch(config, model, criterion, data, optimizer, start, steps):
    model.train()
    optimizer.zero_grad()
    norms = []
    for idx in range(start, start + steps):
        samples, targets = (t.to(config.device) for t in toydata.batch(data, idx))

        outputs = model(samples)

        if config.accumulation_steps > 1:
            loss = criterion(outputs, targets)
            loss = loss / config.accumulation_steps
            if config.amp_opt_level != "O0":
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            if (idx + 1) % config.accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            loss = criterion(outputs, targets)
            optimizer.zero_grad()
            if config.amp_opt_level != "O0":
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                if config.clip_grad:
                    grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), config.clip_grad)
                else:
                    grad_norm = get_grad_norm(amp.master_params(optimizer))
            else:
                loss.backward()
                if config.clip_grad:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_grad)
                else:
                    grad_norm = get_grad_norm(model.parameters())
            norms.append(float(grad_norm))
            optimizer.step()
        toydata.log(idx, "loss", loss.item() * max(config.accumulation_steps, 1))
    return norms


def main(config):
    torch.manual_seed(0)
    model = toydata.make_mlp().to(config.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if config.amp_opt_level != "O0":
        model, optimizer = amp.initialize(model, optimizer, opt_level=config.amp_opt_level)
    criterion = torch.nn.MSELoss()

    start = 0
    if config.resume:
        start = load_checkpoint(config, model, optimizer)
    data = toydata.make_data()
    train_one_epoch(config, model, criterion, data, optimizer, start, config.steps)
    if config.ckpt_out:
        save_checkpoint(config, start + config.steps, model, optimizer)
    if config.params_out:
        toydata.save_params(model, config.params_out)


if __name__ == "__main__":
    config = parse_option()
    config.device = "cuda" if torch.cuda.is_available() else "cpu"
    if config.amp_opt_level != "O0":
        assert amp is not None, "apex is not installed"
    main(config)
