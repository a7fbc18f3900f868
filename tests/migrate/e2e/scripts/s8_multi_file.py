"""amp.initialize here, amp.scale_loss in s8_engine.py; apex optional, a static loss scale."""

import argparse

import torch

try:
    from apex import amp
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False

import toydata
from s8_engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24, help="8 per epoch")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()
    use_amp = args.amp and APEX_AVAILABLE

    torch.manual_seed(0)
    model = toydata.make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if use_amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale=128.0)
    data = toydata.make_data()
    for epoch in range(args.steps // 8):
        train_one_epoch(model, optimizer, data, epoch, 8, use_amp)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
