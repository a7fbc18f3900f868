"""An evaluation script in timm's validate.py shape (efficientdet-pytorch's): ``amp_autocast``
starts as a no-op context, the native branch rebinds it, the apex branch relies on an
inference ``amp.initialize`` (no optimizers) patching torch instead.  A warm-up forward pass
runs outside the context, the measured ones inside it.  The outputs are saved for the test.
"""

import argparse
from contextlib import suppress
from functools import partial

import torch

import toydata

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False


def validate(args):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = toydata.make_mlp().to(device)
    amp_autocast = suppress
    if args.apex_amp:
        assert has_apex, "--apex-amp needs apex"
        model = amp.initialize(model, opt_level="O1")
    elif args.native_amp:
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.float16)
    model.eval()
    x, _ = toydata.make_data()
    outputs = []
    with torch.no_grad():
        outputs.append(model(x[:8].to(device)).float())  # warm-up
        for step in range(4):
            inputs, _ = toydata.batch((x, x), step)
            with amp_autocast():
                output = model(inputs.to(device))
            outputs.append(output.float())
    return torch.cat(outputs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--apex-amp", action="store_true")
    parser.add_argument("--native-amp", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.save(validate(args), args.out)


if __name__ == "__main__":
    main()
