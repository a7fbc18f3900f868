"""A check of the layout (a unit test, named so the project's pytest does not collect it): a
runner built from a config for the metric hook alone (it never names the fp16 optimizer hook),
which carries no GradScaler and needs none."""

import torch
from mmcv.runner import build_runner

from toydet.metric_hook import MetricHook


def check_runner_registers_the_metric_hook():
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    runner = build_runner(dict(type="IterBasedRunner"), default_args=dict(model=model, optimizer=optimizer))
    runner.register_hook(MetricHook())
    assert len(runner.hooks) == 1
