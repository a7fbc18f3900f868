"""One file, the step in the caller: ``backward_chunk`` scales the loss of one chunk of the
batch (delay_unscale on every chunk but the last) and ``fit``, which calls it, clips and steps."""

import argparse

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def backward_chunk(model, chunks, index, optimizer, device, delay_unscale):
    x, y = (t.to(device) for t in chunks[index])
    loss = F.mse_loss(model(x), y) / len(chunks)
    with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
        scaled_loss.backward()
    return loss.item()


def fit(model, optimizer, data, device, first_step, steps, n_chunks, clip):
    model.train()
    for step in range(first_step, first_step + steps):
        x, y = toydata.batch(data, step)
        chunks = list(zip(x.chunk(n_chunks), y.chunk(n_chunks)))
        optimizer.zero_grad()
        total = 0.0
        for index in range(n_chunks):
            last = index == n_chunks - 1
            total += backward_chunk(model, chunks, index, optimizer, device, not last)
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip)
        optimizer.step()
        toydata.log(step, "loss", total)
    return first_step + steps


def save_checkpoint(path, model, optimizer, step):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "amp": amp.state_dict(), "step": step}, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--batch-chunks", type=int, default=2)
    parser.add_argument("--clip", type=float, default=0.5)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    step = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        step = checkpoint["step"]
    step = fit(model, optimizer, toydata.make_data(), device, step, args.steps, args.batch_chunks, args.clip)
    if args.ckpt_out:
        save_checkpoint(args.ckpt_out, model, optimizer, step)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
