"""A timm-family launcher (the train.py shape DeiT, Swin, ConvNeXt and others copied).

``amp_autocast`` starts as a no-op context and only the native branch rebinds it; the apex
branch relies on amp.initialize patching torch instead.  The training loop gets both the
context and the loss-scaler wrapper as keywords, computes the loss in a closure under the
context and hands it to another closure that calls the wrapper.  Checkpoints go through
utils/checkpoint_saver.py, which knows nothing of apex: it stores the wrapper's state under
the wrapper's own key.
"""

import argparse
from contextlib import suppress
from functools import partial

import torch
import torch.nn.functional as F

import toydata
from utils import ApexScaler, NativeScaler, resume_checkpoint, save_checkpoint

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False


def train_one_epoch(model, data, optimizer, args, first_step, amp_autocast=suppress, loss_scaler=None):
    device = next(model.parameters()).device
    accum_steps = args.accum_steps
    optimizer.zero_grad()
    for step in range(first_step, first_step + args.steps):
        need_update = (step + 1) % accum_steps == 0
        inputs, targets = (t.to(device) for t in toydata.batch(data, step))

        def _forward():
            with amp_autocast():
                prediction = model(inputs)  # noqa: B023 (called in the same iteration)
                _loss = F.mse_loss(prediction, targets)  # noqa: B023
            if accum_steps > 1:
                _loss = _loss / accum_steps
            return _loss, prediction

        def _backward(_loss):
            if loss_scaler is not None:
                loss_scaler(
                    _loss,
                    optimizer,
                    clip_grad=args.clip_grad,
                    parameters=model.parameters(),
                    need_update=need_update,  # noqa: B023
                )
            else:
                _loss.backward()
                if need_update:  # noqa: B023
                    if args.clip_grad is not None:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
                    optimizer.step()
            if need_update:  # noqa: B023
                optimizer.zero_grad()

        loss, _ = _forward()
        _backward(loss)
        toydata.log(step, "loss", loss.item() * accum_steps)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp", action="store_true", help="mixed precision training")
    parser.add_argument("--amp-impl", default="apex", choices=["apex", "native"])
    parser.add_argument("--clip-grad", type=float, default=5.0)
    parser.add_argument("--accum-steps", type=int, default=1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp(batchnorm=True).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    amp_autocast = suppress  # nothing to do unless mixed precision is asked for
    loss_scaler = None
    if args.amp and args.amp_impl == "apex":
        assert has_apex, "--amp-impl apex needs NVIDIA apex"
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp:
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.float16)
        loss_scaler = NativeScaler(device.type)

    start = 0
    if args.resume:
        start = resume_checkpoint(args.resume, model, optimizer, loss_scaler=loss_scaler)

    data = toydata.make_data()
    train_one_epoch(model, data, optimizer, args, start, amp_autocast=amp_autocast, loss_scaler=loss_scaler)

    if args.ckpt_out:
        save_checkpoint(args.ckpt_out, model, optimizer, start + args.steps, amp_scaler=loss_scaler)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
