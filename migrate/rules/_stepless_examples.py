"""Repository examples of evaluation and inference files beside a training file that scales:
the stepless route (``rules/_amp_stepless``: a training ``amp.initialize`` whose optimizers
are never stepped and never leave its function scales no loss, so it becomes autocast around
its models without a GradScaler) and the inference load (``_amp_sites.inference_load``: apex's
loss-scaler state restored beside inference-only initializes, in a run that scales no loss,
goes).  Appended to ``REPOSITORY_EXAMPLES``."""

from __future__ import annotations

from typing import List

from .base import Example

#: DeScarGAN's shape: main.py picks the training or the evaluation solver by a flag; the
#: evaluation solver copied the training setup (optimizers, two initializes in sequence)
_SOLVERS = """\
# file: main.py
import sys


if __name__ == "__main__":
    if sys.argv[1] == "train":
        from train_solver import train
        train()
    else:
        from eval_solver import Solver
        Solver("./nets").test()

# file: train_solver.py
import torch
{train_import}

{train_body}
# file: eval_solver.py
import torch
{eval_import}

class Solver:
    def __init__(self, path):
        self.path = path

    def test(self):
        net_g = torch.nn.Linear(4, 4).cuda()
        net_d = torch.nn.Linear(4, 1).cuda()
        g_optimizer = torch.optim.Adam(net_g.parameters(), 1e-4)
        d_optimizer = torch.optim.Adam(net_d.parameters(), 1e-4)
{eval_init}        g_optimizer.zero_grad()
        d_optimizer.zero_grad()
        net_g.load_state_dict(torch.load(self.path + "/net_g.pt"))
        with torch.no_grad():
            print(net_d(net_g(torch.randn(8, 4).cuda())).mean())
"""

_APEX_INITS = """\
        net_g, g_optimizer = amp.initialize(net_g, g_optimizer, opt_level="O1")
        net_d, d_optimizer = amp.initialize(net_d, d_optimizer, opt_level="O1")
"""

_TRAIN_APEX = """\
def train():
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.Adam(net.parameters(), 1e-4)
    net, opt = amp.initialize(net, opt, opt_level="O1")
    loss = net(torch.randn(8, 4).cuda()).pow(2).mean()
    with amp.scale_loss(loss, opt) as scaled_loss:
        scaled_loss.backward()
    opt.step()
"""

_TRAIN_NATIVE = """\
def train():
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.Adam(net.parameters(), 1e-4)
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = net(torch.randn(8, 4).cuda()).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""


def _solvers(eval_import: str, eval_init: str, native_train: bool) -> str:
    """``_SOLVERS`` with the evaluation solver's import and initializes given, the training
    solver in apex's form or migrated."""
    return _SOLVERS.format(
        eval_import=eval_import,
        eval_init=eval_init,
        train_import="" if native_train else "from apex import amp\n",
        train_body=_TRAIN_NATIVE if native_train else _TRAIN_APEX,
    )


_AUTOCAST_INITS = """\
        net_g.forward = torch.autocast("cuda", dtype=torch.float16)(net_g.forward)
        net_d.forward = torch.autocast("cuda", dtype=torch.float16)(net_d.forward)
"""

_KEPT = "        self.d_optimizer = d_optimizer\n"

_TODO = """\
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled elsewhere;
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""

STEPLESS_EXAMPLES: List[Example] = [
    # DeScarGAN's evaluation solver: two training initializes whose optimizers are only zeroed
    # and dropped inside test(): apex scaled no loss of them (amp.scale_loss needs an optimizer an
    # initialize returned), whatever runs after, so no GradScaler; the models run forward under
    # autocast (before: the shim, 'no amp.scale_loss in this file: the losses are scaled
    # elsewhere'), session 30
    Example(
        "evaluation-initialize-whose-optimizers-are-never-stepped-gets-autocast-only",
        before=_solvers("from apex import amp\n", _APEX_INITS, native_train=False),
        after=_solvers("", _AUTOCAST_INITS, native_train=True),
        codes=("APX101", "APX201", "APX209", "APX229", "APX301", "APX311"),
    ),
    # ... but an optimizer of it kept on the instance may be handed to code that scales a loss
    # through it: the shim, as before
    Example(
        "evaluation-initialize-whose-optimizer-is-kept-on-the-instance-keeps-the-shim",
        before=_solvers("from apex import amp\n", _APEX_INITS + _KEPT, native_train=False),
        after=_solvers("from apexcompat import amp\n",
                       _TODO + _APEX_INITS.replace("        net_d", _TODO + "        net_d")
                       + _KEPT, native_train=True),
        codes=("APX101", "APX102", "APX201", "APX209", "APX220", "APX301", "APX311"),
    ),
]

#: Glow-TTS's shape: a training script that scales, and an inference script (its own
#: ``__main__``) whose initialize has no optimizers and which restores apex's loss-scaler
#: state from the training checkpoint; ``{extra_import}`` may tie it to the training code
_INFERENCE = """\
# file: train.py
import torch
{train_import}

{train_body}

if __name__ == "__main__":
    train()

# file: infer.py
import torch
{infer_import}{extra_import}

class Inferencer:
    def __init__(self, path):
        self.model = torch.nn.Linear(4, 1).cuda()
{infer_init}        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        if "amp" in state:
            {load}
        print("loaded", path)


if __name__ == "__main__":
    Inferencer("checkpoint.pt")
"""

_INFER_INIT = '        self.model = amp.initialize(self.model, opt_level="O1")\n'
_LOAD = 'amp.load_state_dict(state["amp"])'


#: the initialize rule's TODO for an inference initialize whose model it cannot wrap
_INFER_TODO = """\
        # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
        #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
"""
#: the ``if`` that goes with the dropped load (it held only that)
_LOADING = '        if "amp" in state:\n            amp.load_state_dict(state["amp"])\n'
_LOAD_TODO = """\
# TODO(apexcompat): amp.load_state_dict restores the loss scale of a training run, but
            #   the amp.initialize of this file is for inference (no optimizers), so no GradScaler
            #   is made here; where no code run in the same process scales a loss, the line can go;
            #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            """
#: the inference script also trains: its import, and its ``__main__`` calling it
_CALLS_TRAIN = (
    "from train import train\n", '    Inferencer("checkpoint.pt")\n', '    Inferencer("checkpoint.pt")\n    train()\n'
)


def _inference(native_train: bool, infer_import: str, infer_init: str, load: str, extra_import: str = "") -> str:
    """``_INFERENCE`` with the training script in apex's form or migrated."""
    return _INFERENCE.format(
        train_import="" if native_train else "from apex import amp\n",
        train_body=_TRAIN_NATIVE if native_train else _TRAIN_APEX,
        infer_import=infer_import,
        infer_init=infer_init,
        load=load,
        extra_import=extra_import,
    )


STEPLESS_EXAMPLES += [
    # Glow-TTS's Inference.py: its run reaches no amp.scale_loss, so the loss scale
    # amp.load_state_dict restores is read by nothing: the line goes (the if keeps a pass)
    # and the model's entry still loads (before: the shim, 'where no code run in the same
    # process scales a loss, the line can go'), session 30
    Example(
        "loss-scaler-state-of-an-inference-script-that-reaches-no-scale-loss-is-dropped",
        before=_inference(False, "from apex import amp\n", _INFER_INIT, _LOAD),
        after=_inference(True, "", _INFER_TODO, _LOAD).replace(_LOADING, ""),
        codes=("APX101", "APX201", "APX206", "APX209", "APX280", "APX301", "APX311"),
    ),
    # ... but where the inference script's run goes on to train (it calls the training code),
    # the loaded loss scale may be read: the shim, as before
    Example(
        "loss-scaler-state-of-an-inference-script-that-calls-the-training-code-keeps-the-shim",
        before=_inference(
            False, "from apex import amp\n", _INFER_INIT, _LOAD, _CALLS_TRAIN[0]
        ).replace(*_CALLS_TRAIN[1:]),
        after=_inference(
            True, "from apexcompat import amp\n", _INFER_INIT, _LOAD_TODO + _LOAD, _CALLS_TRAIN[0]
        ).replace(*_CALLS_TRAIN[1:]),
        codes=("APX101", "APX102", "APX201", "APX209", "APX220", "APX301", "APX311"),
    ),
]
