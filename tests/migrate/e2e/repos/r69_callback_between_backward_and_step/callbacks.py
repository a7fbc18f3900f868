"""Handlers a trainer fires at named events; no apex in here."""

import torch


class Handler:
    """Calls every callback registered for an event with the trainer."""

    def __init__(self):
        self.callbacks = {}

    def register(self, event, callback):
        self.callbacks.setdefault(event, []).append(callback)

    def fire_event(self, event, trainer):
        for callback in self.callbacks.get(event, []):
            callback(trainer)


def clip_gradients(max_norm):
    """A callback that clips the trainer's model gradients at ``max_norm``."""

    def callback(trainer):
        torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), max_norm)

    return callback
