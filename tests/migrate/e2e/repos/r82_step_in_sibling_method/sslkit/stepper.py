"""One training step of the engine: forward, backward, the engine's hook, update; the backward
and the update are methods of their own, each choosing by the engine's precision."""

import torch
import torch.nn.functional as F
from apex import amp


class Stepper:
    def __call__(self, engine):
        x, y = engine.batch()
        with torch.enable_grad():
            loss = F.mse_loss(engine.model(x), y)
        engine.losses.append(loss.item())
        self.backward(engine, loss)
        engine.after_backward()
        self.update(engine)
        engine.step_count += 1

    def backward(self, engine, loss):
        engine.optimizer.zero_grad()
        if engine.precision == "apex":
            with amp.scale_loss(loss, engine.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif engine.precision == "native":
            engine.scaler.scale(loss).backward()
        else:
            loss.backward()

    def update(self, engine):
        if engine.precision == "native":
            engine.scaler.step(engine.optimizer)
            engine.scaler.update()
        else:
            engine.optimizer.step()
