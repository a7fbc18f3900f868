"""Launcher in wetectron's shape: two set-up functions, each building its networks and
optimizers and calling amp.initialize itself (the gated one twice, one network after the
other, with the same options), then handing them to a loop of engine/loops.py, which scales
the losses.  main() picks one of them; each keeps amp's state in its checkpoints."""

import argparse

import torch

import toydata
from apex import amp
from engine.loops import fit, fit_gated


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--gated", action="store_true")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def resume(path, modules, optimizers):
    """The step to start from and the checkpoint (None without one), the networks and the
    optimizers loaded from it."""
    if not path:
        return 0, None
    checkpoint = torch.load(path, map_location="cpu")
    for index, module in enumerate(modules):
        module.load_state_dict(checkpoint[f"module{index}"])
    for index, optimizer in enumerate(optimizers):
        optimizer.load_state_dict(checkpoint[f"optimizer{index}"])
    return checkpoint["step"], checkpoint


def finish(cfg, modules, optimizers, step, amp_state):
    if cfg.ckpt_out:
        state = {f"module{i}": m.state_dict() for i, m in enumerate(modules)}
        state.update({f"optimizer{i}": o.state_dict() for i, o in enumerate(optimizers)})
        torch.save({**state, "step": step, "amp": amp_state}, cfg.ckpt_out)
    if cfg.params_out:
        toydata.save_params(modules[0], cfg.params_out)


def train(cfg, device):
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.opt_level, verbosity=0)
    start, checkpoint = resume(cfg.resume, [model], [optimizer])
    if checkpoint is not None:
        amp.load_state_dict(checkpoint["amp"])
    fit(model, optimizer, toydata.make_data(), start, cfg.steps, device)
    finish(cfg, [model], [optimizer], start + cfg.steps, amp.state_dict())


def train_gated(cfg, device):
    model = toydata.make_mlp().to(device)
    gate = torch.nn.Linear(toydata.D_IN, toydata.D_IN).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    gate_optimizer = torch.optim.SGD(gate.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.opt_level, verbosity=0)
    gate, gate_optimizer = amp.initialize(gate, gate_optimizer, opt_level=cfg.opt_level, verbosity=0)
    start, checkpoint = resume(cfg.resume, [model, gate], [optimizer, gate_optimizer])
    if checkpoint is not None:
        amp.load_state_dict(checkpoint["amp"])
    fit_gated(model, gate, optimizer, gate_optimizer, toydata.make_data(), start, cfg.steps, device)
    finish(cfg, [model, gate], [optimizer, gate_optimizer], start + cfg.steps, amp.state_dict())


def main(cfg):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if cfg.gated:
        train_gated(cfg, device)
    else:
        train(cfg, device)


if __name__ == "__main__":
    main(parse_args())
