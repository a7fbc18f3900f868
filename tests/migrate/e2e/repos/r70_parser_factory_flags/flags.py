"""The training script's flags."""

import argparse


def get_argument_parser():
    parser = argparse.ArgumentParser(description="a toy fine-tuning run")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--max-norm", type=float, default=0.35)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser
