"""A checkpointer that saves and loads whatever objects it is handed by keyword, knowing
nothing of them but their state_dict() / load_state_dict() (no apex here)."""

import copy

import torch


class Keeper:
    def __init__(self, model, **extras):
        self.model = model
        self.extras = copy.copy(extras)

    def save(self, path, **variables):
        state = {"model": self.model.state_dict()}
        for key, obj in self.extras.items():
            state[key] = obj.state_dict()
        state.update(variables)
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state.pop("model"))
        for key in self.extras:
            if key in state:
                obj = self.extras[key]
                obj.load_state_dict(state.pop(key))
        return state
