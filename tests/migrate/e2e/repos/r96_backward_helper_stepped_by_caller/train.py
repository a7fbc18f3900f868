"""understanding-fast-adv's shape: the launcher initializes apex under its --half-prec switch,
computes the loss and hands it to a backward helper of another module (utils.backward), which
scales it only when the switch is on; the launcher clips and steps right after the call."""

import argparse
import os

import torch
import torch.nn.functional as F
import apex.amp as amp

import toydata
import utils


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--half-prec", action="store_true", help="mixed precision through apex.amp")
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    half_prec = args.half_prec
    model = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        first = saved["step"]
    if half_prec:
        model, opt = amp.initialize(model, opt, opt_level="O1")

    data = toydata.make_data()
    model.train()
    for step in range(first, first + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        output = model(x)
        loss = F.mse_loss(output, y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
        opt.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        torch.save({"step": first + args.steps, "model": model.state_dict(), "optimizer": opt.state_dict()},
                   args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
