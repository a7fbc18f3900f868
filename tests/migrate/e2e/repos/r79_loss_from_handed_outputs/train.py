"""Launcher without apex of its own (imaginaire's vid2vid shape): the library builds the networks and
sets amp up, the trainer class comes from the module the options name; checkpoints through the
trainer; --no-amp sets amp up disabled."""

import argparse

import torch

import toydata
from toyvid.utils.trainer import get_model_optimizer, get_trainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--trainer-type", default="toyvid.trainers.fs_vid2vid")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(cfg):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net_G, net_D, opt_G, opt_D = get_model_optimizer(cfg, device)
    trainer = get_trainer(cfg, net_G, net_D, opt_G, opt_D)
    if cfg.resume:
        trainer.load_checkpoint(cfg.resume)
    data = toydata.make_data()
    start = trainer.step
    for step in range(start, start + cfg.steps):
        batch = tuple(t.to(device) for t in toydata.batch(data, step))
        trainer.dis_update(batch)
        trainer.gen_update(batch)
        trainer.step += 1
        toydata.log(step, "loss", trainer.gen_loss)
        toydata.log(step, "grad_norm_G", trainer.grad_norm_G)
    if cfg.ckpt_out:
        trainer.save_checkpoint(cfg.ckpt_out)
    if cfg.params_out:
        params = {f"G.{k}": v for k, v in net_G.state_dict().items()}
        params.update({f"D.{k}": v for k, v in net_D.state_dict().items()})
        torch.save({k: v.detach().float().cpu() for k, v in params.items()}, cfg.params_out)


if __name__ == "__main__":
    main(parse_args())
