"""apex DistributedDataParallel (world size from the environment, gloo) around an amp model."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from apex import amp
from apex.parallel import DistributedDataParallel as DDP

import toydata


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    dist.init_process_group(backend="gloo", init_method="env://")
    world_size = dist.get_world_size()

    torch.manual_seed(0)
    model = toydata.make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05 * world_size, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    model = DDP(model, delay_allreduce=True)

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            toydata.log(step, "loss", loss.item())

    if dist.get_rank() == 0:
        if args.ckpt_out:
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "amp": amp.state_dict(), "step": start + args.steps}, args.ckpt_out)
        if args.params_out:
            toydata.save_params(model, args.params_out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
