"""CuLE's A2C update shape: a rollout runs the model under torch.no_grad() (an environment
step per horizon step, the returns summed in an if holding a loop), then the training forward
pass and loss; the loss is backed plainly under --cpu-train, else through amp.scale_loss, and
the master params are clipped before the step."""

import argparse
import os

import torch
import torch.nn.functional as F

import toydata
from utils.initializers import log_initialize, model_initialize

try:
    from apex import amp
except ImportError:
    raise ImportError("Please install apex to run this example.")


class Env:
    """A toy environment: the next state drifts with the value the model gave the last one."""

    def step(self, state, value):
        return torch.tanh(state.roll(1, 0) + 0.1 * value.sum(dim=1, keepdim=True))


def train(args, model, optimizer, data, env, first):
    for step in range(first, first + args.steps):
        x, y = (t.to(args.device) for t in toydata.batch(data, step))
        states = [x]
        with torch.no_grad():
            for k in range(args.horizon):
                value = model(states[k])
                states.append(env.step(states[k], value))
            returns = torch.zeros_like(y)
            if args.use_gae:
                for k in reversed(range(args.horizon)):
                    returns = 0.5 * returns + model(states[k + 1])
        pred = model(x)
        loss = F.mse_loss(pred, y + 0.05 * returns)
        optimizer.zero_grad()

        if args.cpu_train:
            loss.backward()
            master_params = model.parameters()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            master_params = amp.master_params(optimizer)

        torch.nn.utils.clip_grad_norm_(master_params, args.max_norm)
        optimizer.step()
        toydata.log(step, "loss", loss.item())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", default=None)
    parser.add_argument("--cpu-train", action="store_true")
    parser.add_argument("--no-gae", dest="use_gae", action="store_false")
    parser.add_argument("--horizon", type=int, default=3)
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    log_initialize(args)
    net = toydata.make_mlp()
    first = 0
    saved = None
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        first = saved["step"]
    net, opt = model_initialize(args, net, args.device)
    if saved is not None:
        opt.load_state_dict(saved["optimizer"])

    train(args, net, opt, toydata.make_data(), Env(), first)

    if args.ckpt_out:
        torch.save({"step": first + args.steps, "model": net.state_dict(), "optimizer": opt.state_dict()},
                   args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


if __name__ == "__main__":
    main()
