"""The field the launcher builds; no apex here."""

import toydata
from nets.base import FieldBase


class MipField(FieldBase):
    def __init__(self):
        super().__init__()
        self.layers = toydata.make_mlp()

    def forward(self, x):
        return self.layers(x)
