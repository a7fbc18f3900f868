"""An apex-era training script, as people wrote them: the input of the migration demo.

It imports ``apex.amp`` (gone since 2025), so as written it no longer runs. Migrate it:

    apexcompat-migrate --diff examples/apex_script          # see what would change
    apexcompat-migrate --to shim examples/apex_script       # smallest change: apexcompat.amp
    apexcompat-migrate examples/apex_script                 # plain PyTorch (torch.amp)

and run the result on a CPU or a GPU:  python examples/apex_script/train.py --epochs 2
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp


def build_model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
    )


def make_data(n=512, seed=0):
    gen = torch.Generator().manual_seed(seed)
    templates = torch.randn(10, 3, 8, 8, generator=gen)
    labels = torch.randint(0, 10, (n,), generator=gen)
    return templates[labels] + torch.randn(n, 3, 8, 8, generator=gen), labels


def train_one_epoch(model, optimizer, images, labels, device, batch_size, clip):
    model.train()
    total = 0.0
    for start in range(0, len(images), batch_size):
        x = images[start:start + batch_size].to(device)
        y = labels[start:start + batch_size].to(device)
        output = model(x)
        loss = F.cross_entropy(output, y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip)
        optimizer.step()
        total += loss.item() * len(x)
    return total / len(images)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--clip", type=float, default=5.0)
    parser.add_argument("--checkpoint", default="")
    parser.add_argument("--resume", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])

    images, labels = make_data()
    for epoch in range(args.epochs):
        loss = train_one_epoch(model, optimizer, images, labels, device, args.batch_size, args.clip)
        print(f"epoch {epoch}: loss {loss:.4f}")

    if args.checkpoint:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "amp": amp.state_dict()}, args.checkpoint)


if __name__ == "__main__":
    main()
