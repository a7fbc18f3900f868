"""The bound-backward route's proof of the class a launcher binds a scaling function onto
(``migrate.bound_route``): the shape it edits and the exact reasons it refuses."""

import pytest

from migrate.bound_route import bound_route
from migrate.holder_route import apply_holder_edit

LAUNCHER = """\
import types

import torch


class Launcher(object):
    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer

    @property
    def optimizer(self):
        return self._optimizer

    def compute_loss_gradient(self, data):
        for x, y in data:
            out = self._model(x)
            total_loss = torch.nn.functional.mse_loss(out, y)
{inside}            self.backward(total_loss, self.optimizer)

    def apply_gradient(self):
        self._optimizer.step()
{after_step}
    def train(self, loader):
        for data in loader:
            self.compute_loss_gradient(data)
{between}            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)
            self.apply_gradient()

    def backward(self, total_loss, optimizer):
        total_loss.backward()

    def override_backward(self, fn):
{binder}
"""


def route(inside="", after_step="        self._optimizer.zero_grad()\n", between="",
          binder="        self.backward = types.MethodType(fn, self)"):
    source = LAUNCHER.format(inside=inside, after_step=after_step, between=between, binder=binder).encode()
    return source, bound_route("/r/trainer.py", "trainer.py", source, "Launcher", "override_backward", "grad_scaler")


def test_the_plain_shape_is_edited_and_compiles():
    source, bound = route()
    assert not isinstance(bound, str), bound
    assert (bound.attribute, bound.optimizer_param, bound.optimizer_position) == ("backward", "optimizer", 1)
    assert (bound.backward_method, bound.step_method) == ("compute_loss_gradient", "apply_gradient")
    assert set(bound.training) == {"backward", "override_backward", "compute_loss_gradient", "apply_gradient", "train"}
    new = apply_holder_edit(source, bound.edit).decode()
    compile(new, "trainer.py", "exec")
    assert "        self._optimizer = optimizer\n        self.grad_scaler = None\n" in new
    assert ('            with torch.autocast("cuda", dtype=torch.float16, enabled=self.grad_scaler is not None and '
            "self.grad_scaler.is_enabled()):\n                out = self._model(x)\n"
            "                total_loss = torch.nn.functional.mse_loss(out, y)\n"
            "            self.backward(total_loss, self.optimizer)\n") in new
    assert ("            self.compute_loss_gradient(data)\n            if self.grad_scaler is not None:\n"
            "                self.grad_scaler.unscale_(self._optimizer)\n            torch.nn.utils.clip") in new
    assert ("        if self.grad_scaler is not None:\n            self.grad_scaler.step(self._optimizer)\n"
            "            self.grad_scaler.update()\n        else:\n            self._optimizer.step()\n"
            "        self._optimizer.zero_grad()\n") in new


@pytest.mark.parametrize("kwargs, reason", [
    (dict(binder="        self.backward = fn"),
     "Launcher.override_backward() in trainer.py is not the one statement `self.<attr> = types.MethodType(fn, self)`"),
    (dict(inside="            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)\n"),
     "compute_loss_gradient() in trainer.py reads or clips gradients at line 19, between backwards of one step"),
    (dict(after_step=""),
     "apply_gradient() in trainer.py does not zero the gradients after its step: gradients carried over would mix "
     "scales"),
    (dict(between="            if data is None:\n                continue\n"),
     "line 29 of trainer.py lies between self.compute_loss_gradient() and self.apply_gradient() and may skip or "
     "repeat one"),
    (dict(inside="            self.backward(total_loss, self.optimizer)\n"),
     "compute_loss_gradient() in trainer.py calls the bound backward other than once, in one loop"),
])
def test_shapes_it_cannot_prove_are_refused_with_the_reason(kwargs, reason):
    _source, why = route(**kwargs)
    assert why == reason


def test_a_file_already_using_the_attribute_is_refused():
    source = LAUNCHER.format(inside="", after_step="        self._optimizer.zero_grad()\n", between="",
                             binder="        self.backward = types.MethodType(fn, self)\n        self.grad_scaler = 1")
    why = bound_route("/r/trainer.py", "trainer.py", source.encode(), "Launcher", "override_backward", "grad_scaler")
    assert why == "trainer.py already reads an attribute named grad_scaler"
