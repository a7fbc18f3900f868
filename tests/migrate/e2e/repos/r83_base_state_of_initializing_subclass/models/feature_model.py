"""A model that only computes features: it derives from BaseModel and never uses amp itself;
no script of the layout builds it."""

import torch

import toydata
from models.base_model import BaseModel


class FeatureModel(BaseModel):
    def __init__(self, opt):
        super(FeatureModel, self).__init__(opt)
        self.net = toydata.make_mlp().to(self.device)

    def test(self, x):
        with torch.no_grad():
            return self.net(x)
