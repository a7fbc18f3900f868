"""Train a small CNN with BatchNorm on synthetic CIFAR-like data through ``apexcompat.amp``.

This is an ordinary apex training script whose only change is the import line. It runs on
a GPU when there is one and on the CPU otherwise, and prints amp's own lines (the
``initialize`` banner, ``Gradient overflow.  Skipping step ...``) next to its loss log.

    python examples/train_cifar_like.py --opt-level O1 --steps 30
    python examples/train_cifar_like.py --opt-level O2 --checkpoint ckpt.pt
    python examples/train_cifar_like.py --opt-level O2 --resume ckpt.pt --steps 60
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from apexcompat import amp  # was: from apex import amp


class SmallCNN(nn.Module):
    """conv-bn-relu x2, pooling, linear classifier: the shapes of a CIFAR-10 model, in small."""

    def __init__(self, num_classes: int = 10, width: int = 16) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(2 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


def synthetic_cifar(num_samples: int, image_size: int, num_classes: int = 10, seed: int = 0):
    """Images = a per-class template + noise, so the classes are learnable."""
    gen = torch.Generator().manual_seed(seed)
    templates = torch.randn(num_classes, 3, image_size, image_size, generator=gen)
    labels = torch.randint(0, num_classes, (num_samples,), generator=gen)
    images = templates[labels] + 1.5 * torch.randn(num_samples, 3, image_size, image_size, generator=gen)
    return images, labels


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--opt-level", default="O1", choices=["O0", "O1", "O2", "O3"])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--image-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--checkpoint", help="save model, optimizer and amp state here at the end")
    parser.add_argument("--resume", help="restore model, optimizer and amp state from here first")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None) -> float:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    images, labels = synthetic_cifar(2048, args.image_size)

    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    start_step = 0
    if args.resume:  # apex's order: initialize first, then model, optimizer, amp
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        start_step = checkpoint["step"]
        print(f"resumed from {args.resume} at step {start_step}")

    model.train()
    began = time.perf_counter()
    running = None
    for step in range(start_step, start_step + args.steps):
        index = torch.randint(0, len(images), (args.batch_size,))
        x, y = images[index].to(device), labels[index].to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        running = loss.item() if running is None else 0.9 * running + 0.1 * loss.item()
        if (step + 1) % args.log_every == 0 or step == start_step:
            scale = amp._amp_state.loss_scalers[0].loss_scale() if hasattr(amp._amp_state, "loss_scalers") else 1.0
            print(f"step {step + 1:5d}  loss {loss.item():.4f}  avg {running:.4f}  loss scale {scale}")

    elapsed = time.perf_counter() - began
    print(f"done: {args.steps} steps at {args.opt_level} on {device.type} in {elapsed:.1f}s, "
          f"final avg loss {running:.4f}")
    if args.checkpoint:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "amp": amp.state_dict(), "step": start_step + args.steps}, args.checkpoint)
        print(f"saved {args.checkpoint}")
    return running


if __name__ == "__main__":
    main()
