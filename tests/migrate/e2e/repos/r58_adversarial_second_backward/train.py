"""Launcher in the shape of adversarial fine-tuning (FGM): after the scaled backward of the
clean loss, the first layer's weight is nudged along its gradient, the perturbed batch's loss
is back-propagated with a plain backward() into the same gradients, the weight is put back and
the optimizer steps once.  apex had unscaled the clean gradients when scale_loss exited, so the
perturbed loss's gradients were added at their true size.  apex.amp is kept on the options
object the step function reads."""

import argparse

import torch

import toydata


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--fp16-opt-level", default="O1")
    parser.add_argument("--no-adv", dest="adv", action="store_false")
    parser.add_argument("--epsilon", type=float, default=0.3)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


class WeightNudge:
    """Moves one weight along its normalised gradient and back."""

    def __init__(self, weight, epsilon):
        self.weight, self.epsilon, self.saved = weight, epsilon, None

    def push(self):
        self.saved = self.weight.data.clone()
        size = self.weight.grad.norm()
        if torch.isfinite(size) and size > 0:
            self.weight.data.add_(self.epsilon * self.weight.grad / size)

    def undo(self):
        self.weight.data.copy_(self.saved)


def train_step(opts, model, optimizer, x, y):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    if opts.fp16:
        with opts.amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    if opts.adv:
        opts.nudge.push()
        perturbed = torch.nn.functional.mse_loss(model(x), y)
        perturbed.backward()
        opts.nudge.undo()
    optimizer.step()
    return loss


def main(opts):
    torch.manual_seed(0)
    opts.device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(opts.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if opts.fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=opts.fp16_opt_level, verbosity=0)
        opts.amp = amp
    opts.nudge = WeightNudge(model[0].weight, opts.epsilon)

    start = 0
    if opts.resume:
        checkpoint = torch.load(opts.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if opts.fp16:
            opts.amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    for idx in range(start, start + opts.steps):
        x, y = toydata.batch(data, idx)
        loss = train_step(opts, model, optimizer, x.to(opts.device), y.to(opts.device))
        toydata.log(idx, "loss", loss.item())

    if opts.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + opts.steps}
        if opts.fp16:
            state["amp"] = opts.amp.state_dict()
        torch.save(state, opts.ckpt_out)
    if opts.params_out:
        toydata.save_params(model, opts.params_out)


if __name__ == "__main__":
    main(parse_args())
