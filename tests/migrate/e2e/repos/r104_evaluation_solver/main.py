"""DeScarGAN's shape: main.py picks the training solver or the evaluation solver by --mode.
The evaluation solver copied the training setup: two optimizers, two amp.initialize calls in
sequence, the optimizers zeroed and dropped; its models only run forward."""

import argparse

import torch


def main(config):
    if config.mode == "train":
        from train_solver import Solver

        Solver(config).train()
    else:
        from eval_solver import Solver

        torch.save(Solver(config).test(), config.out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", default="train")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--nets", required=True)
    parser.add_argument("--out", default="")
    main(parser.parse_args())
