"""A trainer-framework shape (DL-Art-School's ExtensibleTrainer): the trainer builds its training
steps (steps.py) first, gathers their optimizers, and initializes apex only then, under the
opt-level option, the steps' optimizers among those it hands over; its checkpoints keep amp's
state.  On a scaled run one step's loss is blown up (--spike) so that apex's dynamic scaler
overflows there and skips that step."""

import argparse

import torch
from apex import amp

import toydata
from steps import TrainingStep


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--spike", type=int, default=3)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


class Trainer:
    def __init__(self, opts, device):
        self.opts = opts
        self.net = toydata.make_mlp().to(device)
        self.steps = []
        for _ in range(1):
            self.steps.append(TrainingStep(self.net, opts.lr, opts.fp16, device))
        self.optimizers = [o for step in self.steps for o in step.optimizers]
        if opts.fp16:
            self.net, self.optimizers = amp.initialize(self.net, self.optimizers, opt_level=opts.opt_level,
                                                       verbosity=0)

    def train(self, data, start, count):
        for step in range(start, start + count):
            x, y = toydata.batch(data, step)
            # only a scaled run can skip the overflowing step: the fp32 runs keep their losses
            blow_up = step == self.opts.spike and self.opts.fp16 and self.opts.opt_level != "O0"
            for s in self.steps:
                loss = s.forward_backward(x, y, blow_up)
                s.do_step()
            toydata.log(step, "loss", loss.item())

    def save(self, path, step):
        state = {"net": self.net.state_dict(), "optimizers": [o.state_dict() for o in self.optimizers],
                 "step": step}
        if self.opts.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def resume(self, path):
        state = torch.load(path, map_location="cpu")
        self.net.load_state_dict(state["net"])
        for o, saved in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(saved)
        if self.opts.fp16:
            amp.load_state_dict(state["amp"])
        return state["step"]


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    trainer = Trainer(args, device)
    start = trainer.resume(args.resume) if args.resume else 0
    trainer.train(toydata.make_data(), start, args.steps)
    if args.ckpt_out:
        trainer.save(args.ckpt_out, start + args.steps)
    if args.params_out:
        toydata.save_params(trainer.net, args.params_out)


if __name__ == "__main__":
    main()
