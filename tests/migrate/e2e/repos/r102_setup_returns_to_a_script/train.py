"""LightningDOT's train_itm.py shape: a script that trains at its module level (no function, no
__main__ guard); the setup helper of nets/ initializes apex and returns model and optimizer; the
loop scales the loss and clips apex's master params under --fp16 (a plain backward and clip
otherwise) and steps at the accumulation boundary; its checkpoints keep no amp state."""

import argparse
import os

import torch
import torch.nn.functional as F

import toydata
from nets.setup import setup_for_training

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--fp16", action="store_true", help="mixed precision through apex.amp")
parser.add_argument("--max-grad-norm", type=float, default=0.5)
parser.add_argument("--grad-acc-steps", type=int, default=1)
parser.add_argument("--steps", type=int, default=24)
parser.add_argument("--resume", default="")
parser.add_argument("--ckpt-out", default="")
parser.add_argument("--params-out", default="")
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = toydata.make_mlp()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
first = 0
if args.resume and os.path.isfile(args.resume):
    saved = torch.load(args.resume, map_location="cpu")
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    first = saved["step"]

model, optimizer = setup_for_training(model, optimizer, device, args.fp16, "O1")

data = toydata.make_data()
model.train()
for step in range(first, first + args.steps):
    x, y = (t.to(device) for t in toydata.batch(data, step))
    output = model(x)
    loss = F.mse_loss(output, y)
    if args.grad_acc_steps > 1:
        loss = loss / args.grad_acc_steps

    if args.fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if args.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
    else:
        loss.backward()
        if args.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)

    if (step + 1) % args.grad_acc_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
    toydata.log(step, "loss", loss.item())

if args.ckpt_out:
    torch.save({"step": first + args.steps, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
               args.ckpt_out)
if args.params_out:
    toydata.save_params(model, args.params_out)
