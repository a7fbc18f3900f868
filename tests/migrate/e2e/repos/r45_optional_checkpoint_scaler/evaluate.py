"""Evaluates a checkpoint: restores the model alone (no optimizer, no loss scaler) and prints
the loss on a few batches.  Run on its own; nothing imports it."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from utils.checkpoint import load_checkpoint


def evaluate(path):
    model = toydata.make_mlp(batchnorm=True)
    step = load_checkpoint(path, model)
    model.eval()
    data = toydata.make_data()
    with torch.no_grad():
        losses = [F.mse_loss(model(x), y).item() for x, y in (toydata.batch(data, s) for s in range(4))]
    print(f"step {step}: eval loss {sum(losses) / len(losses):.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("checkpoint")
    evaluate(parser.parse_args().checkpoint)
