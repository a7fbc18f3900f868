"""Entry point: amp.initialize here, the backward in engine.py."""

import torch
from apex import amp
from apex.optimizers import FusedAdam

from engine import train_step


def main():
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    optimizer = FusedAdam(model.parameters(), lr=1e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
    for step in range(20):
        batch = torch.randn(64, 16), torch.randint(0, 4, (64,))
        loss = train_step(model, optimizer, batch, torch.nn.functional.cross_entropy)
        if step % 10 == 0:
            print(f"step {step}: loss {loss:.4f}")
    print(f"final loss {loss:.4f}")


if __name__ == "__main__":
    main()
