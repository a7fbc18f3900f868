"""Injectors: each runs a network on an entry of the state and returns what it adds."""


class Generate:
    train_only = False

    def __init__(self, source, target):
        self.source, self.target = source, target

    def __call__(self, net, state):
        return {self.target: net(state[self.source])}
