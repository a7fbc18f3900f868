"""r51's fine-tuning script with its flags built by a parser factory of another file, the
shape of DeepSpeedExamples' BingBertSquad (``parser = get_argument_parser()`` from utils.py):
the clipper runs on amp.master_params(optimizer) after every backward, the step at the
accumulation boundary, whose count defaults to 1 in flags.py."""

import torch
import torch.nn as nn
from apex import amp
from apex.multi_tensor_apply import multi_tensor_applier

import toydata
from flags import get_argument_parser


class GlobalNormClipper:
    """Scales all the gradients down together so that their L2 norm is at most ``limit``."""

    def __init__(self, limit):
        self.limit = limit
        if multi_tensor_applier.available:
            import amp_C

            self.overflow = torch.zeros(1, dtype=torch.int)
            self.l2norm = amp_C.multi_tensor_l2norm
            self.scale = amp_C.multi_tensor_scale
        else:
            raise RuntimeError("the clipper needs apex's CUDA extensions")

    def step(self, params):
        grads = [p.grad for p in params if p.grad is not None]
        norm, _ = multi_tensor_applier(self.l2norm, self.overflow, [grads], False)
        norm = norm.item()
        if norm == float("inf"):
            return
        factor = self.limit / (norm + 1e-6)
        if factor < 1:
            multi_tensor_applier(self.scale, self.overflow, [grads, grads], factor)


def main():
    parser = get_argument_parser()
    args = parser.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    start = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if args.fp16:
            amp.load_state_dict(state["amp"])
        start = state["step"]
    clipper = GlobalNormClipper(args.max_norm)
    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        clipper.step(amp.master_params(optimizer))
        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        toydata.log(step, "loss", loss.item())
    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if args.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        torch.save({k: v.detach().float().cpu() for k, v in model.state_dict().items()}, args.params_out)


if __name__ == "__main__":
    main()
