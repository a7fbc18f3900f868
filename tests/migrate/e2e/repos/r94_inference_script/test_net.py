"""An evaluation script in maskrcnn-benchmark's tools/test_net.py shape (DLE MaskRCNN): the
opt level is chosen into a variable, the model goes through an inference ``amp.initialize``
(no optimizers) and a checkpointer, then an inference function of another module runs it once
per dataset.  The outputs are saved for the test.
"""

import argparse

import torch

import toydata
from engine.inference import inference

from apex import amp


class Checkpointer:
    """Holds the model to load its weights; never runs it."""

    def __init__(self, model):
        self.model = model

    def load(self, state):
        self.model.load_state_dict(state)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = toydata.make_mlp(batchnorm=True).to(device)
    weights = {k: v.clone() for k, v in model.state_dict().items()}

    amp_opt_level = "O1" if args.fp16 else "O0"
    model = amp.initialize(model, opt_level=amp_opt_level)

    checkpointer = Checkpointer(model)
    checkpointer.load(weights)
    x, _ = toydata.make_data()
    datasets = [x[:64], x[64:128]]
    results = []
    for data in datasets:
        result = inference(model, data, device=device)
        results.append(result)
    torch.save(torch.cat(results), args.out)


if __name__ == "__main__":
    main()
