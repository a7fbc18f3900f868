"""An evaluation script without apex.amp: builds its model through the same setup helper, with
no optimizer."""

import argparse

import torch

import toydata
from nets.setup import setup_for_training

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model, _ = setup_for_training(toydata.make_mlp(), None, device, args.fp16)
model.eval()
with torch.no_grad():
    x, y = (t.to(device) for t in toydata.batch(toydata.make_data(), 0))
    print("eval loss", torch.nn.functional.mse_loss(model(x).float(), y).item())
