"""End to end: small multi-file apex repositories (e2e/repos/), migrated --to native, trained on the CPU.

One layout per shape of issue 9 (a launcher plus a package that scales the loss, a trainer class
across methods, a model-owned GAN step, a scaler wrapper class beside a native one, checkpoint
helpers in another module, apex.amp passed on as a value, a config-driven opt level, a repository
already on apexcompat.amp, a timm-family launcher, alternative initializes, the optimizer step in the
caller of the function that scales the loss, an initialize in a method __init__ calls under an if,
loss-scaler settings in a stepper class of another file that scales the loss its caller computes, a
task configured by a dict beside a native branch, apex.amp kept by a helper class and read for its
master params, a task that steps an optimizer wrapper holding the optimizer apex scales for, mmcv's
runner handed to a registered optimizer hook and a runner subclass, a forward pass before the
branches that compute and scale the loss, an if that only returns between the loss and its
scale_loss, apex beside native mixed precision in one loop, an initialize whose repository scales no
loss, two methods of one class that each initialize and scale their own losses, apex.amp kept on the
options object the launcher hands its step function, and the same handed to a step function of another
launcher's file, apex.amp handed to a resume helper's **kwargs, a model factory that initializes twice and
returns its networks to a loop that scales through a backward helper, a base class that initializes once
behind a run-once flag with a subclass in another module that scales the loss, a loop that initializes several
models under the fp16 switch, with a metric and a filter between each forward pass and its loss, a placement
helper that initializes and returns to the __init__ of a trainer class in each of two scripts, the same
helper also called from a script without apex.amp, apex imported behind ImportError guards with the forward
pass run in chunks by a helper handed the model, a restorer class of another module that keeps amp's state
beside a sibling class no file builds, a GAN trainer class that initializes its networks one after the other
and clips through a helper handed its named parameters, mmcv's runner built by calling its class through
a local alias on each branch, a trainer with its own GradScaler beside apex, a trainer whose clipping
method a probe of another file calls after a plain backward and whose resume initializes again,
an old mmcv runner handed the launcher's batch processor and an optimizer hook the launcher builds,
apex.amp kept on the options object handed to a method of a trainer picked from a table, a trainer
module whose forward() outputs the launcher hands to its update method, a stepper class the launcher
picks at run time beside a keeper handed apex.amp in a dict it spreads, checkpoint helpers whose loader
an evaluation script run on its own also calls without a loss scaler, a training module whose call
returns the loss the launcher hands back to its update method, a star-imported fitter built before
amp.initialize, a trainer re-exported by a star import whose base class keeps amp's state in its
checkpoints, a script that clips inside the amp.scale_loss block with an accumulation count of 1
by default, a launcher without apex.amp that joins a model factory to the helpers that scale
the loss and keep amp's state, a clipper class written with apex's fused kernels called after
every backward, a backward helper bound by functools.partial in a trainer that keeps the
initializing GAN module as an attribute, a launcher whose training loop already scales with a
GradScaler of its own, an optimizer wrapper of another file with a warm-up count of its own
whose held optimizer apex scales for, a trainer that builds its training steps before it
initializes apex, a launcher whose two set-up functions each initialize apex for the loop they
call, a preparation helper that returns before amp.initialize when mixed precision is off, a
trainer whose forward pass runs in a try that skips out-of-memory batches, a static loss scale
of 1 kept after an overflow, a callback fired between the scaled backward and the step that clips,
apex.amp kept on an object by a helper and read as apex.amp or None by a class of a file without apex,
a trainer class picked by a module name at run time whose base class scales with loss ids (the
initializing module keeps one GradScaler per loss id, read through it), a library whose initializer and training function only a command of another module
calls, in turn, with a tune command that sets apex up itself (bonito: a module-level GradScaler), a
base trainer that scales each loss under its loss id in a backward method of its own and two
subclasses in files without apex.amp that call those methods and step, a step class whose
injectors run the forward passes before the loop that sums its losses in an outer block, a
launcher that binds a function of another file that scales the loss onto the object it builds,
whose class, in a file without apex.amp, runs the forward passes, clips and steps, an
optimizer holder whose method initializes apex for the optimizers a trainer and a loss term built
by name scale through (self.optimizer.G), an engine
built from a registry by name whose module the initializing module imports (the engine imports
that module in the methods that read its GradScaler), a trainer that initializes apex in its own
__init__ and derives from a base class of another module that keeps amp's state in its
checkpoints, a runner that initializes apex in its __init__ and whose optimization hook, in
another file, scales the loss its base class's step stored (cvpods), a stepper whose backward
method scales on one branch of the engine's precision and whose update method, called next by
the same caller after the engine's clipping hook, steps on the plain branch, a trainer picked by
name whose update runs the networks frame by frame and hands their outputs to the methods that
compute, scale and step the losses (r79), a GAN built by name from a registry whose train step
scales loss ids 0/1 beside the runner's own GradScaler, with an initializer helper an apex-free
training API calls and regularizers reading apex's loss scales (mmgeneration: one module-level
GradScaler per loss id, on the device of the models and optimizers at run time), a script
whose __main__ guard calls its initializing setup() and then its main(), which scales (UCSNet: a
module-level GradScaler in the script), a subclass that overrides its base's scaling method and
leaves the clipping and the step to the base's method that calls it, with a step of its own on
another optimizer after each (r86), a plain backward in the other branch of the scaling
test, which may run with the GradScaler on (r84), a subclass of another file, without
apex.amp, that overrides the base's step hook inside its optimizer's skip_synchronize() after
reducing the scaled gradients in its backward hook (r90, DeepGNN's Horovod trainer), a
trainer whose scaled branch steps through a hook method while its plain branch steps itself
(r91), a trainer whose train() initializes, evaluated by a fresh instance and before
train() (r88), a clipper of its own on every backward right before the if that steps at the
accumulation boundary, run with two backwards per step (r92, DLE-BERT run_squad.py), and a
distiller that takes apex.amp from a star import of a helper module that never uses it itself
(r98), a rollout under torch.no_grad() before the training forward pass, with a plain
branch for --cpu-train beside the scaled one and apex.amp's version printed by the initializing
module (r95, CuLE), and apex.amp (or None) handed to the training function of a module without
apex, which scales, clips and steps through that parameter (r97), a backward helper of another
module handed the loss under the launcher's half-precision switch, whose launcher clips and steps
right after each call (r96, understanding-fast-adv), apex.amp (or None) handed to a helper of the
same file that initializes it under its own test and loads its state (r99, unilm's s2s-ft), and a network built before
amp.initialize whose own loader loads amp's state when its flag says so, also built and loaded by
a script without apex that runs alone (r101, Enigmatisms/NeRF: the loader takes the GradScaler as
``scaler=None`` and loads it only when given), and a script that trains at its module level (no
function, no ``__main__`` guard) with the model and optimizer a setup helper of its package
initializes and returns, also called with no optimizer by an evaluation script without apex
(r102, LightningDOT: the helper returns the GradScaler, the script's top-level unpacking binds
it as a module-level name), and a trainer of another module that scales a regularizer's penalty
after the model's scaled backward, before the same step, the regularizer reading the gradients
between (r103, MiB: ``unscale_`` after the first backward, the penalty's backward plain), and a
trainer of another module handed only the launcher's flags, with a GradScaler of its own made on
its native branch alone beside apex's scaling and a plain step for every other path (r105,
sockeye: the launcher's GradScaler, handed in, serves the apex sites and the plain step), and a
field network built as its subclass whose base class loads amp's state beside a proposal network
with a loader of the same name, whose __main__ block renders instead of training under a flag
(r107, Enigmatisms/NeRF: each loader takes the GradScaler as ``scaler=None``).  Apart
from LAYOUTS (no
training): r94, evaluation scripts whose inference
amp.initialize (no optimizers) the migration follows, timm's validate.py shape (the no-op
amp_autocast bound to torch.autocast on the apex branch) and maskrcnn-benchmark's test_net.py
shape (the opt level through a variable): their outputs are compared with the originals';
r104, DeScarGAN's shape: main.py picks a training solver or an evaluation solver whose two
amp.initialize calls get optimizers it only zeroes (autocast without a GradScaler): the
evaluation's outputs are compared with the original's.
Once per module:

1. every repository is copied to a temp dir and migrated in place with the real CLI
   (``--to native --allow-no-vcs``, one subprocess per repository, run side by side);
2. the ORIGINAL launchers run through e2e/fake_apex (``apex.amp`` = apexcompat.amp: CPU O1 is
   float16 CPU autocast plus apex's dynamic loss scaler): a full run, and a half run that writes
   an apex-format checkpoint (``amp.state_dict()``);
3. the migrated launchers run a full run and a run resumed from the original's checkpoint, with
   ``apex`` and ``apexcompat`` unimportable (only ``apex`` where the tool fell back to the shim).
   The launchers pick their device at run time (``cuda`` if available, else ``cpu``), so the
   native output runs float16 CPU autocast and an ENABLED CPU ``GradScaler`` on this machine:
   no CUDA mapping is needed (contrast test_e2e_scripts.py).

Runs share two subprocesses (e2e/runner.py): the originals, then the migrated ones.

Outcome per layout (LAYOUTS): ``native`` (no apex/apexcompat import left, no manual-work finding
but the listed ones; the runs block both packages) or ``fallback`` (the tool keeps apexcompat.amp:
its APX220 (or APX270) findings must be one of the exact sets pinned, so a change in what the tool does shows
up here; the shim output is run and compared too, and the native-only checks skip).  Today every
layout but r98 (the helper module's apex.amp import stays on the shim for the distiller, APX270)
comes out native (r4 and r9: the launcher's no-op
autocast variable is bound to torch.autocast on the apex branch; r3: train_step takes one GradScaler per loss id, num_losses=2, and the checkpoint's
loss_scaler0/loss_scaler1 resume into them; r6 and r15: the helpers given apex.amp are given the GradScaler, and their files change too: LAYOUTS 'given').

Tolerances (``-s`` prints the measured figures in the last test):
* native vs the original: both run float16 CPU autocast and a dynamic scaler from 65536, and
  GradScaler and apex's scaler unscale (by a power of two), skip and step the same way, so the
  runs track each other to fp16 rounding noise: NATIVE_REL (the same 2e-3 as
  test_e2e_scripts.CUDA_SIM_REL; measured ||native - O1|| / ||O1|| <= 3.6e-4 (r5, BatchNorm),
  3.0e-4 (r11, two scaled chunks per step), 1.2e-4 elsewhere (r3: 0.0, bitwise), <= 5.3e-5
  resumed);
* where a migrated forward would run outside float16 autocast (a LAYOUTS 'gap'; none today), an
  fp32 forward against the original's fp16 one: FP16_REL (test_e2e_scripts: measured <= 2.0e-3,
  allowed 1e-2);
* fallback (apexcompat.amp, the same code the original runs through fake apex): TIGHT
  (measured: bitwise);
* resumed runs: the same tolerance as the full runs of their layout, against the uninterrupted
  original;
* a launcher's other branches (LAYOUTS 'branches': r10's static loss scale): the same tolerance as
  its full runs, original and migrated both on that branch.
A migration mistake moves the weights far more (test_e2e_scripts: a dropped unscale_ before
clipping 6e-1, a scaler state that is not loaded 1.1e-1).  Mutations of the migrated output,
checked by hand: a dropped load_scaler_state (r5) fails the resume test (the clean-step count
restarts at 0), autocast disabled (r8) and the apex branch's amp_autocast left a no-op (r4, r9)
fail the fp32 check, a dropped scaler.update() (r7) fails the run, r14's clipping method called
without the unscale_ before it (the tool's check of same-file clipping calls turned off) fails the
run, the O1 comparison, the resume and the static branch, and a dropped unscale_ before r15's
clip_gradients moves the weights by 4.7e-1, and one before r16's
clip_grads (the hook's) by 4.7e-1 (1.1e-4 with it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List

import pytest
from test_e2e_scripts import FAKE_APEX, FP16_REL, SCRIPTS_DIR, TIGHT, _assert_close, _flatten, _max_diff, _metric, \
    _migrate, _rel_diff, _run_process

torch = pytest.importorskip("torch")

REPOS_DIR = Path(__file__).resolve().parent / "e2e" / "repos"
NATIVE_REL = 2e-3

# Per layout: its launcher, the arguments of its amp run and of its fp32 reference run (the
# original at O0), the steps of a full run (even: the checkpoint is written half way), the
# metric that must decrease, and what the tool does with it today, pinned EXACTLY: ``native``:
# the manual-work codes a native result carries (None: a native result is not expected);
# ``fallbacks``: the exact sets of APX220 findings (path, line, message) of a shim fallback;
# ``gap``: why a native forward may still run outside float16 autocast on the CPU (none now);
# ``differs``: branches run like ``branches`` whose native run is known to train otherwise than
# the original's, with a finding that says so (a flag away from its default), checked by a test
# of their own.
LAYOUTS: Dict[str, dict] = {
    # do_train(model, dataset, optimizer, device, ...) in a package module: autocast follows `device`
    "r1_launcher_package": dict(
        launcher="tools/train_net.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
        native=[], fallbacks=[]),
    # Trainer(model, optimizer) of another module, re-exported by trainers/__init__.py
    "r2_trainer_class": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[],
        fallbacks=[]),
    # the model class scales its own losses (GAN.train_step) and is built before
    # amp.initialize: train_step takes the GradScalers, one per loss id (num_losses=2), and
    # the launcher passes them (reading GAN.LATENT / GAN.real_batch(...) hands nothing away)
    "r3_model_owned_step": dict(
        launcher="train_gan.py", amp=[], fp32=["--opt_level", "O0"], steps=30, metric="distance", native=[],
        fallbacks=[]),
    # ApexScaler becomes a holder of the launcher's GradScaler; the forward runs in the launcher
    # under its amp_autocast (a nullcontext on the apex branch), which the migration binds to
    # torch.autocast there
    "r4_scaler_wrapper": dict(launcher="train.py", amp=["--amp"], fp32=[], steps=24, metric="loss", native=[],
                              fallbacks=[]),
    "r5_checkpoint_helpers": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                                  native=[], fallbacks=[]),
    # restore(..., amp=amp) / snapshot(..., amp=amp): the helpers only save/load amp's state,
    # so they are given the GradScaler; restore loads through load_scaler_state
    "r6_amp_as_value": dict(launcher="main.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                            native=[], fallbacks=[], given=["lib/checkpointing.py"]),
    # the r6 shape kept on an object (Checkpointer(model, optimizer, amp=amp) keeps self.amp for
    # its state) and a helper that clips amp.master_params(optimizer): both are given the
    # GradScaler; the launcher unscales before the clipping helper
    "r15_amp_kept_by_helpers": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                    metric="loss", native=[], fallbacks=[], given=["engine/tools.py"]),
    # loss_scale=cfg.SOLVER.LOSS_SCALE, opt_level=cfg.SOLVER.AMP_OPT_LEVEL: nothing rebinds cfg
    # between the initialize and the GradScaler, which reads both as apex did ("dynamic" or
    # None under O1/O2: dynamic; a number: static); 'static': the config's scale set to 128.0;
    # 'unset': the config's amp switch set to None (apex ran fp32; the migrated switch is
    # bool(...) because torch.autocast raises TypeError on enabled=None)
    "r7_config_opt_level": dict(launcher="tools/train.py", amp=[], fp32=["SOLVER.AMP_OPT_LEVEL", "O0"], steps=24,
                                metric="loss", native=[], fallbacks=[],
                                branches={"unset": ["SOLVER.AMP_ENABLED", "None"],
                                          "static": ["SOLVER.LOSS_SCALE", "128.0"]}),
    "r8_already_apexcompat": dict(launcher="scripts/train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                  metric="loss", native=[], fallbacks=[]),
    # one file: backward_chunk scales each chunk's loss (delay_unscale but on the last chunk), its
    # caller fit clips amp.master_params and steps: the scaler is threaded into both
    "r11_step_in_caller": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                               native=[], fallbacks=[]),
    # timm's train.py shape: `amp_autocast = suppress` and the wrapper reach train_one_epoch as
    # keywords; the loss comes out of a _forward() closure under the context and goes to a
    # _backward() closure that calls the wrapper; checkpoints keyed by the wrapper's own key
    "r9_timm_family": dict(launcher="train.py", amp=["--amp"], fp32=[], steps=24, metric="loss", native=[],
                           fallbacks=[]),
    # setup() initializes on one of two branches (dynamic, or a static loss_scale=128.0) and
    # returns model, optimizer, scheduler to main, which scales: each branch creates the scaler,
    # setup returns it too; the static branch runs as the 'branch' variant
    "r10_alternative_initialize": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                       metric="loss", native=[], fallbacks=[],
                                       branches={"static": ["--static-loss-scale"]}),
    # XLM's trainer: __init__ calls init_amp() (which initializes) only when --amp >= 0, and
    # optimize() has an fp32 branch for --amp -1: __init__ creates a disabled GradScaler that
    # init_amp() replaces; the 'off' branch (no apex at all) must train bitwise as before; the
    # forward pass is in a subclass that inherits optimize(): autocast goes there too
    "r12_conditional_init_amp": dict(launcher="train.py", amp=[], fp32=["--amp", "0"], steps=24, metric="loss",
                                     native=[], fallbacks=[], branches={"off": ["--amp", "-1"]}),
    # DLE-GNMT's trainer: the stepper class of another file tunes apex's loss scaler in its
    # __init__ (initial scale 1024, growth window 4, through amp._amp_state) and scales the loss
    # the trainer hands it: the settings update the GradScaler passed in, the trainer puts
    # autocast around its forward pass; the 'off' branch (--math fp32) never touches apex
    "r13_scaler_settings_in_stepper": dict(launcher="train.py", amp=[], fp32=["--math", "fp32"], steps=24,
                                           metric="loss", native=[], fallbacks=[],
                                           branches={"off": ["--math", "fp32"]}),
    # a Task configured by a dict: amp.initialize(..., **self.amp_args) beside a native
    # GradScaler branch of its own (an AmpType enum), the clip in a method of its own through a
    # master_params helper module (apex branch, param-groups fallback): the options are read
    # from the dict at run time, unscale_ goes before the clipping method's call; the other
    # branches: a static loss_scale, amp off (amp_args None), the task's own native branch
    "r14_config_task": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                            native=[], fallbacks=[],
                            branches={"static": ["--loss-scale", "128.0"], "none": ["--amp-type", "none"],
                                      "native": ["--amp-type", "native"]}),
    # mmcv's runner and hooks (Swin-Det and the mmdet/mmseg forks that copied it), on a stand-in
    # mmcv package of the layout: the launcher initializes under the optimizer-hook config's
    # use_fp16 and sets fp16_enabled, the library hands its runner to a registered optimizer
    # hook that scales and clips, a runner subclass saves/resumes amp's state through a
    # checkpoint function of its package: the runner carries the GradScaler (disabled when fp16
    # is off), the library's auto_fp16 runs the forward under autocast; the 'off' branch
    # (--fp16 0: the plain runner, no apex) must train bitwise as before
    "r16_framework_hook": dict(launcher="train.py", amp=[], fp32=["--fp16", "0"], steps=24, metric="loss",
                               native=[], fallbacks=[], branches={"off": ["--fp16", "0"]}),
    # r16 with the runner built by calling its class through a local alias, the amp runner
    # on the fp16 branch and the library's own on the other (Video-Swin-Transformer, sweep6),
    # and a unit test of the layout that builds a runner for another hook: each runner the
    # launcher builds carries the GradScaler, so the 'off' branch (the plain runner, whose
    # hook now steps through runner.grad_scaler) runs too
    # CodeGen's trainer: its own GradScaler as self.scaler for --fp16 --apex 0 beside apex for
    # --apex 1 (initialized in a method __init__ calls when --amp >= 0), the forward under the
    # model's own autocast, "scaler" and "amp" checkpoint entries each on its own branch: the
    # GradScaler replacing apex takes another name (sweep6: it overwrote self.scaler with a
    # disabled one, so the 'own-scaler' branch trained without loss scaling and the resume from
    # the apex checkpoint found a "scaler" it never wrote); 'off' is plain fp32 without apex
    # a preparation helper that returns before amp.initialize when --fp16 is 0: that return
    # hands back a disabled GradScaler and main's autocast follows the one it unpacks; the 'off'
    # branch never sets apex up and trains as before, bit for bit
    # speech-recipe trainer shape (aps): the forward pass of a task module that returns its own
    # loss runs in a try whose handler skips an out-of-memory batch (returns) or raises again; the
    # loss is checked for finiteness, then scaled: autocast holds the whole try (before: APX220,
    # no forward pass next to the scale_loss); O0 is fp32 without loss scaling
    "r62_guarded_forward": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                metric="loss", native=[], fallbacks=[]),
    # amp.initialize in a try under --fp16 whose handler prints and returns (vokenization's
    # xmatching): the GradScaler goes after the if, switched by --fp16 (before: created inside
    # the try with autocast always on, so --fp16 0, the default, ran its forward in float16
    # and then found no scaler)
    "r87_initialize_in_exiting_try": dict(launcher="train.py", amp=["--fp16", "1"], fp32=["--fp16", "1", "--opt-level", "O0"],
                                          steps=24, metric="loss", native=[], fallbacks=[],
                                          branches={"off": ["--fp16", "0"]}),
    # a script's __main__ guard calls setup() (which initializes under --fp16, after a nested
    # helper with returns of its own) and then main() (which scales) at module level: the
    # script keeps the GradScaler in a module-level variable (before: the shim stayed)
    "r85_script_module_scaler": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                     metric="loss", native=[], fallbacks=[], branches={"off": ["--fp16", "0"]}),
    # the loss scaled only on the iterations whose args.fp16 the loop sets (every other 4 steps),
    # a plain backward in the else, one step after the if, apex set up for --opt-level: the plain
    # backward goes through the GradScaler too (before: its gradients reached scaler.step unscaled,
    # divided by the scale, or "_scale is None" before the first scaled iteration), with an
    # unscale_ before the else's clip; 'period-1' alternates every step
    # the scaled branch steps through a hook method (_apex_step), the plain else steps the
    # optimizer itself, args.fp16 switched every --period steps: the hook steps through the
    # GradScaler too (before: its plain step applied gradients still multiplied by the loss
    # scale, the else's step being taken for the scaled backward's); 'period-1': every step
    # stereo-transformer's shape: `if args.apex: ... amp.initialize ... else: amp = None`, then
    # train_one_epoch(..., amp) of engine/train.py (no apex in it) scales, clips and steps through
    # that parameter, and save_checkpoint(..., amp) of the launcher keeps its state: the launcher
    # hands the GradScaler in that slot (APX230) and engine/train.py reads its parameter as the
    # GradScaler (APX271, 'given'); the fp32 run (no --apex) hands a disabled one
    # unilm s2s-ft's shape: apex.amp (or None) handed to prepare(), which initializes it under
    # `if amp:` and loads its state; the parameter is read as an on/off flag (APX286) and
    # prepare() sets a module-level GradScaler that train() reads after calling it
    "r99_amp_or_none_initialized_by_its_helper": dict(
        launcher="main.py", amp=["--apex"], fp32=[], steps=24, metric="loss", native=[], fallbacks=[]),
    "r97_amp_value_to_a_train_module": dict(
        launcher="main.py", amp=["--apex"], fp32=[], steps=24, metric="loss", native=[], fallbacks=[],
        given=["engine/train.py"]),
    # TextBrewer's shape (sweep17): engine/utils.py imports apex.amp behind an ImportError guard
    # and uses it nowhere itself; the distiller takes it with `from .utils import *` and
    # initializes, scales, clips and keeps amp's state with it.  The import stays, on the shim
    # (APX270), and the distiller runs through it (before: the import was removed as unused,
    # and the distiller's fp16 path failed with a NameError on amp)
    "r98_amp_taken_through_a_star_import": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=None,
        fallbacks=[[("engine/utils.py", 5,
                     "apex.amp (as amp) is taken from this module by other files of the repository "
                     "(engine/distiller.py), which use it there: it stays, through apexcompat.amp, and they keep "
                     "apex.amp semantics with it; migrate them by hand, then delete this import")]],
        given=["engine/utils.py"]),
    # understanding-fast-adv's shape: utils.backward(loss, opt, half_prec) of another module scales the
    # loss the launcher hands it under the --half-prec switch; the launcher clips and steps right after
    # the call.  The helper takes the GradScaler (its plain branch scales through it too), the
    # launcher's forward pass gets autocast, its step goes through the scaler with scaler.unscale_
    # before the clip (APX272); the fp32 run hands a disabled one
    "r96_backward_helper_stepped_by_caller": dict(launcher="train.py", amp=["--half-prec"], fp32=[], steps=24,
                                                  metric="loss", native=[], fallbacks=[], saves=False),
    # Enigmatisms/NeRF's ProposalNetwork: built before amp.initialize, loadFromFile(path,
    # use_amp, opt, keys) loads amp's state when its flag says so; average.py (no apex, run
    # alone) builds it and calls loadFromFile with a flag too: the method takes the GradScaler
    # as `scaler=None`, the launcher's resume passes it (an apex checkpoint resumes through
    # load_scaler_state), the script's call stays
    "r101_method_loader_beside_a_script": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[]),
    # LightningDOT's shape: train.py trains at its module level; nets/setup.py initializes under
    # --fp16 (the models alone when no optimizer is given: an inference initialize, its TODO
    # APX206) and returns model and optimizer; evaluate.py (no apex) calls it with None.  The
    # helper returns the GradScaler, the script's top-level statement unpacks it (APX244), the
    # forward pass goes under autocast, the master-params clip on the scaled gradients (the step
    # is at the accumulation boundary) and the step through the scaler; evaluate.py takes it
    # into `_` (APX235).  No amp state in the checkpoints; 'accumulate': two backwards a step
    "r102_setup_returns_to_a_script": dict(
        launcher="train.py", amp=["--fp16"], fp32=[], steps=24, metric="loss", native=["APX206"], fallbacks=[],
        saves=False, branches={"accumulate": ["--grad-acc-steps", "2"]}, given=["evaluate.py"]),
    # MiB's shape: the trainer of another module scales the model's loss, lets an EWC regularizer
    # read the gradients (its Fisher information) and scales the regularizer's penalty before the
    # same step.  scaler.unscale_ follows the first backward (apex had unscaled there: the Fisher
    # information is not multiplied by the loss scale squared) and the penalty's backward runs
    # plain, outside autocast (APX276)
    "r103_term_backed_after_unscale": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        saves=False),
    "r91_step_hook_beside_plain_step": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                            metric="loss", native=[], fallbacks=[], saves=False,
                                            branches={"period-1": ["--period", "1"]}),
    "r84_plain_branch_beside_scaled": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                           metric="loss", native=[], fallbacks=[], saves=False,
                                           branches={"period-1": ["--period", "1"]}),
    # r84 with the same clip in both branches: once the else's backward is scaled the branches
    # read the same and are written once, without the if (``_same_branches``)
    "r89_same_branches_written_once": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                           metric="loss", native=[], fallbacks=[], saves=False,
                                           branches={"period-1": ["--period", "1"]}),
    "r61_setup_returns_early": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                    metric="loss", native=[], fallbacks=[], branches={"off": ["--fp16", "0"]}),
    # sockeye's shape (sweep22): the launcher sets apex up under --apex-amp and hands the trainer
    # two flags; the trainer makes a GradScaler of its own only under --amp, scales through apex
    # under the other flag in one method and clips and steps in the method that calls it,
    # plainly on every path but its own GradScaler's.  The launcher's GradScaler reaches the
    # trainer as a parameter and serves every apex site, the plain step and an unscale_ before
    # the clip ('off': apex never set up, the run is the original fp32 one bit for bit); before,
    # those sites took the trainer's own self._scaler, which exists only under --amp (the
    # default and the 'off' runs failed with an AttributeError), and the clip in the calling
    # method kept the whole plan on the shim
    # the Hugging Face Trainer of 2020: _training_step(model, inputs, optimizer) scales over the
    # optimizer train() hands it and steps after each accumulation of 2, clipping
    # amp.master_params (apex counts its clean backwards, the GradScaler its steps: counts=False)
    "r106_method_handed_optimizer": dict(
        launcher="train.py", amp=[], fp32=["--fp16", "0"], steps=24, metric="loss", native=[], fallbacks=[],
        counts=False),
    # Enigmatisms/NeRF's train.py: a field network built as its subclass of another file (the
    # base class's loadFromFile loads amp's state) and a proposal network with a loader of its
    # own of the same name, both built before amp.initialize; the __main__ block runs
    # render.py's render_only instead of training under --render, which sets the networks up
    # for inference and loads them with no GradScaler (each loader takes it as `scaler=None`)
    "r107_subclass_built_loader_render_or_train": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=["APX206"],
        fallbacks=[]),
    "r105_own_scaler_only_on_the_native_branch": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        branches={"off": ["--apex-amp", "0"], "own-scaler": ["--apex-amp", "0", "--amp", "1"]}),
    "r39_own_scaler_beside_apex": dict(launcher="train.py", amp=[], fp32=["--fp16", "0", "--amp", "0"], steps=24,
                                       metric="loss", native=[], fallbacks=[],
                                       branches={"off": ["--fp16", "0", "--amp", "-1"],
                                                 "own-scaler": ["--apex", "0", "--amp", "-1"]}),
    "r37_runner_built_by_class": dict(launcher="train.py", amp=[], fp32=["--fp16", "0"], steps=24, metric="loss",
                                      native=[], fallbacks=[], branches={"off": ["--fp16", "0"]}),
    # r14's shape with ClassyVision's optimizer wrapper: amp.initialize and amp.scale_loss name
    # the torch optimizer a ScheduledOptimizer holds, the task steps the wrapper
    # (step(where=...) sets the lr, then steps what it holds; its param_groups are the held
    # optimizer's): scaler.step(wrapper, where=...) and unscale_(wrapper) in the clipping
    # method (amp.master_params of the held optimizer); the other branches: gradient
    # accumulation (the gradients rescaled at the boundary), a static loss_scale, amp off, the
    # task's own native branch
    "r17_optimizer_wrapper": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                  metric="loss", native=[], fallbacks=[],
                                  branches={"accumulate": ["--accumulate", "2"], "static": ["--loss-scale", "128.0"],
                                            "none": ["--amp-type", "none"], "native": ["--amp-type", "native"]}),
    # image-classification launcher shape: `outputs = model(x)` before `if accumulate:`, each
    # branch computing the loss from the outputs and scaling it, the opt level from the command
    # line (O0: no amp, apex optional), checkpoints in utils.py: autocast goes around the forward
    # and around each branch's loss; the other branches: gradient accumulation, no clipping
    "r18_forward_before_branch": dict(launcher="main.py", amp=[], fp32=["--amp-opt-level", "O0"], steps=24,
                                      metric="loss", native=[], fallbacks=[],
                                      branches={"accumulate": ["--accumulation-steps", "2"],
                                                "noclip": ["--clip-grad", "0"]}),
    # early one-stage detector shape: the loop in engine.py multiplies the loss by the world
    # size and returns on a non-finite loss (an if that only leaves) between the loss and its
    # scale_loss: autocast goes around the forward and the loss arithmetic, the guard stays
    # after it; the launcher turns mixed precision on when apex imports; the other branches:
    # gradient accumulation, the loss scaled by a world size of 2
    "r19_exit_guard": dict(launcher="train.py", amp=[], fp32=["--fp32"], steps=24, metric="loss", native=[],
                           fallbacks=[],
                           branches={"accumulate": ["--accumulate", "2"], "world": ["--world-size", "2"]}),
    # apex and native mixed precision side by side (--amp-impl): the loss from an if/else whose
    # native branch already runs under autocast: the apex branch's forward gets an autocast of
    # its own, the native branch's switch is widened (off there), the GradScaler takes a free
    # name; the other branch: the native implementation, which must train as before
    "r20_apex_beside_native": dict(launcher="train.py", amp=[], fp32=["--fp32"], steps=24, metric="loss",
                                   native=[], fallbacks=[], branches={"native": ["--amp-impl", "native"]}),
    # self-supervised shape: models.py initializes (opt level from the command line), train.py
    # trains with a plain loss.backward() and no file scales a loss (apex trained unscaled): the
    # model's forward is wrapped in autocast, no GradScaler exists ('scaled': False: the
    # checkpoints hold no amp entry); the other branch: --no-fp16, apex never set up
    "r23_initialize_without_scale_loss": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                              metric="loss", native=[], fallbacks=[], scaled=False,
                                              branches={"off": ["--no-fp16"]}),
    # aitoolbox's / scene_graph_benchmark's shape: the launcher still initializes through apex,
    # while the loop it calls (engine/loop.py, no apex) already scales with a GradScaler of its
    # own: apex scaled no loss, so the forward is wrapped in autocast and the loop keeps its
    # GradScaler, whose state the checkpoints carry under "scaler" ('scaled': False: no amp
    # entry); the other branch: --no-fp16, apex never set up and the loop's scaler disabled
    "r53_loop_with_own_scaler": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                     metric="loss", native=[], fallbacks=[], scaled=False,
                                     branches={"off": ["--no-fp16"]}),
    # NLP learner shape: find_lr() and fit() each initialize with an optimizer of their own and
    # scale their own losses (find_lr's in a helper only it calls, after its initialize): both
    # create self.scaler afresh where they initialized, as apex replaced its loss scaler at each
    # initialize; fit's checkpoints carry its state; the other branch: --no-fp16
    "r24_initialize_per_method": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                      metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # fine-tuning script shape: main() keeps apex.amp on the options object (opts.amp = amp)
    # and hands opts to this file's step function, which scales through opts.amp; models.py is
    # handed opts too but reads no .amp: the GradScaler goes on opts (opts.scaler) where it is
    # created, on both paths; the checkpoints' amp entry is read and written through opts.amp
    # in main(); the other branch: --no-fp16
    "r25_amp_on_args": dict(launcher="train.py", amp=[], fp32=["--fp16-opt-level", "O0"], steps=24,
                            metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # apex.amp handed by keyword to a resume helper that loads every keyword object through a
    # **kwargs loop (strict=False first, the plain call on TypeError): the helper is left as it
    # is and given ScalerCheckpoint(scaler), which loads the original's apex-format entry
    "r28_amp_into_checkpointer": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                      metric="loss", native=[], fallbacks=[]),
    # video-GAN shape: a model factory in nets/ builds the generator and one critic per scale and
    # initializes them in sequence (the generator with its optimizer, then the critics with
    # theirs), returning them to train.py, whose loss_backward helper scales each loss: the
    # factory returns one GradScaler as one more value (apex replaced its scalers at the
    # second initialize), main() unpacks it, hands it to loss_backward and puts autocast around
    # the forward passes (the critics' loop inside it); the other branch: --no-fp16
    "r29_factory_initialize": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=30,
                                   metric="distance", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # segmentation-trainer shape: the base class sets up amp once, in a method behind a run-once
    # flag (a checkpoint load clears it and sets up again), and a subclass in another module
    # overrides the iteration that scales the loss and clips: the base keeps self.scaler, made
    # in the guard's branch (a disabled one where __init__ sets the flag), the subclass uses
    # the inherited one and unscales before its clipping; the other branch: --no-fp16
    "r26_base_class_guard": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                 metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # r25 across files: train.py's step function (it scales through cfg.amp and clips) is
    # imported by a sibling script, tune.py, which keeps apex.amp on its own options object:
    # both launchers put the GradScaler on their options as .scaler, the step reads it there;
    # the 'tune' branch runs tune.py (its own launcher, 'launchers'), 'tune-off' without fp16
    "r27_amp_on_args_shared": dict(launcher="train.py", amp=[], fp32=["--fp16-opt-level", "O0"], steps=24,
                                   metric="loss", native=[], fallbacks=[],
                                   branches={"off": ["--no-fp16"], "tune": [], "tune-off": ["--no-fp16"]},
                                   launchers={"tune": "tune.py", "tune-off": "tune.py"}),
    # multi-objective fitting shape: under the fp16 switch, a loop initializes each model with
    # its optimizer and only stores the results; engine.py trains each model in turn, with a
    # metric under torch.no_grad() and a filter that may skip the model's batch (continue)
    # between its forward pass and its loss: one GradScaler after that loop and its if, so it
    # and its switch exist on the fp32 path too; the autocast covers the metric and the filter;
    # the other branches: --fp32 (apex never set up, bitwise as before), the filter on
    "r30_setup_loop": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                           native=[], fallbacks=[],
                           branches={"off": ["--fp32"], "filter": ["--max-error", "0.9"]}),
    # r29's factory called by two scripts that share nothing else: train.py and tune.py (its
    # own losses and backward step) each unpack what build_gan() returns and scale their own
    # losses: the factory returns a GradScaler to each, each script unpacks its own, threads it
    # and puts autocast around its forward passes; the 'tune' branch runs tune.py, 'tune-off'
    # without fp16, 'off' train.py without fp16
    "r31_factory_two_callers": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=30,
                                    metric="distance", native=[], fallbacks=[],
                                    branches={"off": ["--no-fp16"], "tune": [], "tune-off": ["--no-fp16"]},
                                    launchers={"tune": "tune.py", "tune-off": "tune.py"}),
    # DPR's shape: a placement helper initializes and returns model and optimizer to the
    # __init__ of a trainer class in train.py and of another in tune.py, each keeping them on
    # self; their other methods scale, clip on master_params, step, save and load apex's state
    # (train.py's __init__ loads it after the helper returned): the helper returns a GradScaler
    # to each __init__, unpacked onto self.scaler; 'tune' runs tune.py, 'tune-off' and 'off'
    # without fp16
    "r33_factory_class_receiver": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=30,
                                       metric="loss", native=[], fallbacks=[],
                                       branches={"off": ["--no-fp16"], "tune": [], "tune-off": ["--no-fp16"]},
                                       launchers={"tune": "tune.py", "tune-off": "tune.py"}),
    # speech-synthesis recipe shape: apex.amp, or None under --fp32, handed to the same file's
    # step function, which scales, clips through amp.master_params and returns amp's state
    # through that parameter: the call passes the GradScaler (disabled under --fp32) in that
    # slot and the parameter's tests read its switch (APX230); --fp32: bitwise as before
    "r32_amp_or_none_argument": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                     metric="loss", native=[], fallbacks=[], branches={"off": ["--fp32"]}),
    # DPR's shape, with a caller of the setup helper in a file without apex.amp: the trainer's
    # __init__ unpacks the GradScaler the helper now returns, its own _calc_loss method (model
    # and loss) goes under autocast, and probe.py, an fp32 script with no apex that builds its
    # models through the same helper, unpacks the extra value into _ (its call indexed [0]
    # stays); 'apex-free' runs probe.py (bitwise as before), 'off' the trainer without fp16
    "r36_factory_caller_without_apex": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=30,
                                            metric="loss", native=[], fallbacks=[], given=["probe.py"],
                                            branches={"off": ["--no-fp16"], "apex-free": []},
                                            launchers={"apex-free": "probe.py"}),
    # fine-tuning-script shape of the pytorch-transformers era: apex imported behind an
    # ImportError guard in main (before initialize) and again right before the scale_loss; the
    # batch runs through the model in chunks, each by a helper of steps.py handed the model,
    # in a loop that collects the outputs the loss is computed from: the guards go, the
    # autocast takes the chunk loop in with the loss, the step loop gets the GradScaler as a
    # parameter and unscales before clipping; --fp32 never touches apex (bitwise as before)
    "r34_forward_loop": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                             native=[], fallbacks=[], branches={"off": ["--fp32"]}),
    # video-language trainer shape: a restorer class of another module, imported under another
    # name, keeps the model, the optimizer and (under fp16) amp's state, resuming in its
    # constructor; a sibling class no file builds saves amp's state too: both take the
    # GradScaler ('round-trip': the run saves half way, goes on two steps, and a second restorer
    # rewinds it to that native checkpoint; 'off': --no-fp16, bitwise as before)
    "r38_restorer_class": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                               native=[], fallbacks=[], branches={"off": ["--no-fp16"], "round-trip": ["--round-trip"]}),
    # domain-adaptation GAN shape: a trainer class initializes its predictor and two critics one
    # after the other under fp16 (one GradScaler for all, as apex's last loss scaler served
    # every optimizer); the predictor's update logs its loss terms in a loop and adds a
    # consistency term computed under no_grad() inside an if, both between the forward pass and
    # the scale_loss (the autocast covers them), then clips through another module's helper
    # handed the named parameters in a comprehension (unscale_ before it); the critics share
    # one scaled backward and two steps; the trainer saves and loads amp's state itself; the
    # other branches: --no-fp16 (apex never set up), the consistency term off
    "r35_gan_trainer": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                            native=[], fallbacks=[],
                            branches={"off": ["--no-fp16"], "noconsistency": ["--consistency", "0"]}),
    # research NLP trainer shape: the constructor initializes under an opt level, a public
    # clipping method reads amp.master_params, and a learning-rate probe of another file (no
    # apex) calls it after a plain backward: the unscale_ goes before the trainer's own call,
    # not inside the method (the probe's gradients were never scaled); resuming initializes the
    # same objects again before amp.load_state_dict (apex raised there: the re-initialize goes,
    # the constructor's GradScaler loads the original's apex-format entry); the other branch:
    # --no-fp16
    "r40_helper_called_elsewhere": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                        metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # self-supervised shape on old mmcv: the distributed path initializes under fp16 and builds
    # Runner(model, batch_processor, optimizer), registering an optimizer hook it builds itself,
    # which scales runner.outputs["loss"] (divided for accumulation) and clips at the step;
    # the launcher function saves and loads amp's state with the runner's checkpoints; the
    # single-device path builds a runner with the same processor and the library's hook. The
    # hook takes the GradScaler through its constructor, the processor a switch that puts its
    # body under autocast, turned on by the GradScaler's state where the hook's runner is
    # handed it; the other branches: gradient accumulation, fp16 off, the single-device path
    "r41_batch_processor_runner": dict(launcher="train.py", amp=[], fp32=["--fp16", "0"], steps=24, metric="loss",
                                       native=[], fallbacks=[],
                                       branches={"accumulate": ["--update-interval", "2"], "off": ["--fp16", "0"],
                                                 "single": ["--fp16", "0", "--dist", "0"]}),
    # r25 with the step in a method: worker() keeps apex.amp on opts and hands opts to fit() of
    # a trainer object picked from a table of classes; fit() scales through opts.amp on every
    # micro-step and steps at the accumulation boundary (every step by default: apex counts
    # its unskipped steps per backward, a GradScaler per step): the GradScaler goes on opts
    # (opts.scaler) where it is created and fit() reads it there (no other call of a method
    # named fit() hands anything in its slot); the other branch: --no-fp16
    "r42_amp_on_args_method": dict(launcher="train.py", amp=[], fp32=["--fp16-opt-level", "O0"], steps=24,
                                   metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # image-translation GAN trainer shape: a module's forward() runs the networks, the launcher
    # (no apex) hands its outputs (one a clone) to the update method, which runs a head on them
    # and scales the loss: forward() goes under autocast too (every call of the update method
    # hands it forward's outputs), beside the update's own forward pass; the trainer saves and
    # loads amp's state itself; the other branch: --no-fp16
    "r43_forward_fed_update": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                   metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # re-identification trainer shape: the launcher's class initializes under the fp16 switch,
    # picks the stepper class by that switch ((MixedStepper if fp16 else PlainStepper)(...), no
    # file calls either by name) and spreads a dict holding the optimizer, and apex.amp when on,
    # into a keeper of another module that saves/loads every value it keeps: the object built
    # carries the GradScaler (self.stepper.grad_scaler), the keeper is given
    # ScalerCheckpoint(scaler) in the dict; the other branch: --no-fp16
    "r44_picked_trainer_keeper": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                      metric="loss", native=[], fallbacks=[], branches={"off": ["--no-fp16"]}),
    # r5's checkpoint helpers, whose loader an evaluation script (no apex, run on its own) also
    # calls without a loss scaler: the loader takes the GradScaler as scaler=None and loads its
    # state only when given (test_a_script_without_a_grad_scaler_still_loads_the_model)
    "r45_optional_checkpoint_scaler": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                           metric="loss", native=[], fallbacks=[]),
    # loss = box(x, y); box.update_params(loss): the loss the update method scales is what
    # calling the module returned, so forward() goes under autocast, switched like the GradScaler
    # (created where the initialize was, beside an accelerator branch whose device it must not
    # name); the update divides the loss for accumulation and clips amp.master_params at the
    # step (every step by default: apex counts its unskipped steps per backward, a GradScaler
    # per step); the other branches: --accumulate 2, --no-fp16
    "r46_loss_from_module_call": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                      metric="loss", native=[], fallbacks=[],
                                      branches={"accumulate": ["--accumulate", "2"], "off": ["--no-fp16"]}),
    # Kaggle-2020-Alaska2's shape: the launcher star-imports the fitter module and builds the
    # fitter (which makes its own optimizer) before amp.initialize of fitter.model /
    # fitter.optimizer: the GradScaler goes on the instance where it is created (APX248), the
    # fitter's methods read it on self, and its checkpoints keep it
    "r47_fitter_built_first": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                   metric="loss", native=[], fallbacks=[]),
    # severstal's (pytorch-template's) shape: the trainer is imported from a package that
    # re-exports it with a star import, and derives from a base class of another file that saves
    # and loads amp's state: the trainer keeps the GradScaler on self first thing in __init__, the
    # base reads it there; the other branch accumulates two micro-batches (delay_unscale)
    "r48_base_saves_amp_state": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                     metric="loss", native=[], fallbacks=[],
                                     branches={"accumulate": ["--accumulate", "2"]}),
    # GPT2-Chinese's shape: the clip inside the amp.scale_loss block, the step under
    # (step + 1) % count == 0 with the count's flag 1 by default, the opt level read from a flag
    # whose default is O1: the default run is apex's O1, so the clip stays on this backward's
    # scaled gradients after scaler.scale(loss).backward() and unscale_ follows (APX330, r60);
    # under --opt-level O2 apex's clip there read the still empty master gradients and did
    # nothing, which the native clip does not: the finding says so, and 'differs' runs it
    # (test_a_clip_kept_inside_the_backward_differs_under_o2)
    "r49_clip_inside_scale_loss": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[],
        fallbacks=[], branches={"off": ["--no-fp16"], "tight": ["--max-norm", "10000"]},
        differs={"o2": ["--opt-level", "O2"]}),
    # video-synthesis shape: the launcher names no apex.amp (it mentions apex only in its
    # docstring); it gets model and optimizer from a factory in nets/ (apex initializes there)
    # and hands each loss to a backward helper of another module of nets/, which scales it and
    # steps, beside checkpoint helpers that keep amp's state: the factory returns the
    # GradScaler, the launcher binds it (not into _), passes it to each helper as scaler= and
    # puts autocast around the forward pass that feeds the loss; 'off': --no-fp16
    "r50_glue_launcher": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                              native=[], fallbacks=[], given=["train.py"], branches={"off": ["--no-fp16"]}),
    # few-shot-vid2vid's shape: r50's launcher without apex.amp, but the factory initializes two
    # networks and their optimizers with num_losses=2 and the launcher gives the backward
    # helper's loss_id a number at each call (the head's loss 1, the encoder's 0): the factory
    # returns the list of GradScalers, the launcher hands it to the helpers as scalers= and the
    # helper steps through scalers[loss_id]; the checkpoint's loss_scaler0/loss_scaler1 resume
    # into them; 'off': --no-fp16
    "r56_helper_called_from_plain_file": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                              metric="loss", native=[], fallbacks=[], given=["train.py"],
                                              branches={"off": ["--no-fp16"]}),
    # NVIDIA's BERT scripts: a clipper class written with apex's kernels (amp_C's l2norm and
    # scale through multi_tensor_applier; the fake apex carries both) called on
    # amp.master_params after every backward, the step under a count of 1 by default: the
    # class becomes torch's clip_grad_norm_ and its call moves into the if that steps, after
    # unscale_ (APX263); 'amp-off': amp off, the clip on the plain gradients (torch's norm and
    # apex's kernels round differently: not bitwise, so not an 'off' branch); 'loose': a
    # threshold no step reaches; 'accumulate': two backwards per step (before: the second
    # unscale_ raised)
    "r51_kernel_norm_clip": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                 metric="loss", native=[], fallbacks=[],
                                 branches={"amp-off": ["--no-fp16"], "loose": ["--max-norm", "100"],
                                           "accumulate": ["--gradient_accumulation_steps", "2"]}),
    # r51 with its flags from a parser factory of another file (DeepSpeedExamples' BingBertSquad:
    # get_argument_parser() in utils.py): the count's default of 1 is read there through the
    # plan, so the clipper moves into the step's if after unscale_ as in r51 (APX263); flags.py
    # is unchanged; 'accumulate': two backwards per step
    "r70_parser_factory_flags": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                     metric="loss", native=[], fallbacks=[],
                                     branches={"amp-off": ["--no-fp16"],
                                               "accumulate": ["--gradient_accumulation_steps", "2"]}),
    # lucidrains' trainers: the backward helper is called through `backwards = partial(helper,
    # self.fp16)` in the trainer's train(), which reaches the networks, their optimizers and
    # (migrated) the GradScalers through the GAN module it keeps as self.GAN, whose __init__
    # initializes with num_losses=2; each call hands over its loss id's GradScaler, the
    # checkpoint's loss_scaler0/loss_scaler1 resume into them; 'off': --no-fp16 (apex never set
    # up); 'accumulate': two micro-batches per step in each phase
    "r52_partial_backward_gan": dict(launcher="train.py", amp=[], fp32=["--no-fp16"], steps=24, metric="loss",
                                     native=[], fallbacks=[],
                                     branches={"off": ["--no-fp16"], "accumulate": ["--accumulate", "2"]}),
    # glow-tts' shape: an optimizer wrapper of another file (no apex.amp) whose step() steps the
    # torch optimizer it holds, then advances a warm-up count of its own; apex initializes and
    # scales for the held optimizer, train_steps() (handed the wrapper by main) clips
    # amp.master_params of it and steps the wrapper; one loss is blown up so that step overflows:
    # the wrapper's step takes the GradScaler (scaler=None) and steps the held optimizer through
    # it, so the overflow skips that inner step alone and the count still advances, as under
    # apex; 'off': --no-fp16 (the wrapper called with a disabled GradScaler).  Measured: full~O1
    # 7.9e-4 (2.9e-4 without the overflow: lr 0.2 carries the float16 rounding further); a count
    # held back on the skipped step, as scaler.step(wrapper) would, moves the weights by 7.8e-3
    "r54_wrapper_step_given_the_scaler": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                              metric="loss", native=[], fallbacks=[], given=["warmup.py"],
                                              branches={"off": ["--no-fp16"]}),
    # DL-Art-School's trainer shape: the trainer builds its training steps (steps.py) before it
    # initializes apex under the fp16 flag; the GradScaler, whose arguments read nothing bound in
    # between, is made before the steps are built and handed to each; a step scales its loss for
    # its list of optimizers and steps them in a loop of another method (scaler.update() after
    # the loop); one loss overflows; the trainer's checkpoints keep the scaler's state; 'off':
    # --no-fp16 (the steps handed a disabled GradScaler)
    "r57_steps_built_before_initialize": dict(launcher="trainer.py", amp=[], fp32=["--opt-level", "O0"],
                                              steps=24, metric="loss", native=[], fallbacks=[],
                                              branches={"off": ["--no-fp16"]}),
    # adversarial fine-tuning (FGM): a plain backward() of a perturbed forward adds to the
    # gradients between the scaled backward and the step; apex had unscaled the first ones by
    # then, a GradScaler unscales them all at the step, so the plain backward is scaled too
    # (left plain, its gradients are divided by the loss scale: the weights move by ~1e-1);
    # its forward runs outside autocast (fp32, apex's O1 ran it in float16); 'clean': --no-adv,
    # 'off': --no-fp16
    "r58_adversarial_second_backward": dict(launcher="train.py", amp=[], fp32=["--fp16-opt-level", "O0"],
                                            steps=24, metric="loss", native=[], fallbacks=[],
                                            branches={"clean": ["--no-adv"], "off": ["--no-fp16"]}),
    # wetectron's shape: a launcher whose two set-up functions each call amp.initialize (the
    # gated one twice in sequence, with the same options) and hand what they made to a loop of
    # another module that scales the losses: each function creates its own GradScaler and passes
    # it to the loop it calls (the gated loop steps two optimizers through it, an update after
    # each, as apex's one replaced loss scaler did); 'gated': the second set-up; 'o0': apex at O0
    # (a disabled GradScaler, the weights equal)
    "r59_launcher_initializing_in_two_functions": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"],
                                                       steps=24, metric="loss", native=[], fallbacks=[],
                                                       branches={"gated": ["--gated"],
                                                                 "o0": ["--opt-level", "O0"]}),
    # r49 with the opt level written in the script (O1, or O0 under --fp32): the clip inside the
    # amp.scale_loss block cuts this backward's scaled gradients on every run, so it stays after
    # the scaled backward and unscale_ follows it (APX330); with a count of 2 the migrated script
    # raises at the second backward
    "r60_clip_inside_scale_loss_literal_level": dict(
        launcher="train.py", amp=[], fp32=["--fp32"], steps=24, metric="loss", native=[], fallbacks=[],
        branches={"off": ["--no-fp16"], "tight": ["--max-norm", "10000"]}),
    # imaginaire's shape: the launcher (no apex) gets the networks and optimizers from a library
    # module that initializes both with num_losses=2 (enabled by a flag), and the trainer from
    # the module its options name (importlib at run time); the base class of that trainer
    # scales each update's loss with its own loss id and steps, logs a gradient norm with apex's
    # loss scale of the loss id undone, and keeps amp's state in its checkpoints.  No call chain
    # reaches the base class (which class is built is known only at run time): the initializing
    # module keeps one GradScaler per loss id in a module-level variable, which the base trainer
    # and the meter read through that module (APX252); autocast wraps the call of the abstract
    # forward methods the subclass overrides; 'off': --no-amp (amp.initialize(enabled=False))
    "r66_trainer_built_by_name": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[],
        fallbacks=[], branches={"off": ["--no-amp"]}),
    # imaginaire's vid2vid shape: as r66, but the picked trainer (a subclass without apex of
    # the one that scales) overrides the update: it runs the generator and the critic frame by
    # frame and hands their outputs to the methods that compute the losses (a frozen feature
    # network among the criteria), scale them with their loss ids and step.  Autocast wraps
    # what the update computes before each call and the loss computation before each backward
    # (APX253); 'off': --no-amp (amp.initialize(enabled=False))
    "r79_loss_from_handed_outputs": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[],
        fallbacks=[], branches={"off": ["--no-amp"]}),
    # deepspeech.pytorch's shape: apex's static loss scale of 1 from a flag's default (a loss
    # whose backward ignores the gradient it is handed, as warp-ctc's does), amp.master_params
    # clipped: the GradScaler is static at 1 and keeps that scale after an overflow (its
    # backoff factor 1); 'skip': step 5 left out (the reference of the overflow test below)
    "r68_static_scale_of_one": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                    metric="loss", native=[], fallbacks=[], counts=False,
                                    branches={"skip": ["--skip-step", "5"]}),
    # transform-and-tell's shape: the trainer fires "backward" between the scaled backward and
    # the step, and the handler registered there (another file) clips the model's gradients:
    # scaler.unscale_ goes before the fire_event call (main's output clipped the scaled
    # gradients: 4.0e-1 from the original, this 1.2e-4); 'loose': a threshold that never clips
    "r69_callback_between_backward_and_step": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"],
                                                   steps=24, metric="loss", native=[], fallbacks=[],
                                                   branches={"loose": ["--max-norm", "1e9"]}),
    # DL-Art-School's shape: the trainer (trainer.py) initializes apex with one loss id per
    # step and keeps amp's state in its checkpoints; each step (steps.py) runs its injectors
    # (the forward passes) in its body, sums its loss objects' losses under `if train`, and
    # divides the sum by the accumulation count in an inner `if` before its amp.scale_loss:
    # one autocast region over the injector loop, one over the loss's start and loop; 'off':
    # --no-amp (apex never set up, the step's plain backward); 'accumulate': two chunks a step
    "r74_forward_in_caller": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                  metric="loss", native=[], fallbacks=[],
                                  branches={"off": ["--no-amp"], "accumulate": ["--accumulate", "2"]}),
    # vissl's shape: a task whose config's amp_type (default apex) picks apex.amp (initialized in
    # prepare(), its state under "amp") or torch's GradScaler it keeps as amp_grad_scaler; the
    # train step is a class registered by name (@register_train_step) and built through the
    # registry, called with the task: it scales on either branch and runs the task's hooks (a
    # clip that unscales on the torch branch only) between the backward and the step.  Kept on
    # the module-level GradScaler of the task's file (the reader route): run_backward scales
    # through it and unscales at once (apex had, before the hooks ran), run_optimizer_step,
    # which __call__ runs next, steps through it under `elif task.amp_type == AmpType.APEX`
    # (the apex branch's test: it excludes the torch branch before it); the other branches:
    # torch's own AMP, and amp off
    "r65_registry_step_with_native_sibling": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[],
        fallbacks=[], given=["selfsup/util.py"],
        branches={"pytorch": ["--amp-type", "pytorch"], "none": ["--no-amp"]}),
    # argus-alaska's shape: core/mixed.py initializes apex on the learner's network and optimizer
    # and keeps apex.amp itself on the learner (learner.amp = amp); the learner's file has no apex
    # and reads self.amp as apex.amp or None: it scales every chunk's loss through it (delay_unscale
    # until the last), steps once, and keeps amp's state in its checkpoints.  The attribute becomes
    # a GradScaler-or-None holder (self.scaler), both files edited in one plan; 'off': --no-fp16
    # lffont's shape: the base class initializes three networks (num_losses=3) and scales each
    # loss in a backward method of its own under a loss id (the classifier's for two
    # optimizers), stepping nothing; two subclasses in files without apex.amp drive the
    # iterations and step: one GradScaler on self serves every loss id (an optimizer fed by two
    # ids is stepped at one scale), the subclasses' steps go through it with one update() after
    # the last, their forward passes and losses under autocast; the checkpoint's loss_scaler0
    # resumes into it ('loss_ids': apex saves three); 'off': --no-fp16; 'factorized': the other
    # subclass
    "r73_step_in_subclass": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                                 native=[], fallbacks=[], given=["trainers/combined.py", "trainers/factorized.py"],
                                 loss_ids=3, branches={"off": ["--no-fp16"], "factorized": ["--kind", "factorized"]}),
    "r63_amp_attribute_holder": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                     metric="loss", native=[], fallbacks=[], given=["core/learner.py"],
                                     branches={"off": ["--no-fp16"]}),
    # bonito's shape: the command module (no apex) calls the library's load_state, which
    # initializes apex under `if use_amp: try: ... except NameError:` and restores a checkpoint
    # with amp's state, then its train, which scales, clips amp.master_params and steps, then its
    # save_state: no function of the library calls another, so no call chain hands a GradScaler
    # on.  The library keeps it in a module-level variable the initializer assigns (APX250);
    # 'off': --no-amp (load_state makes a disabled one); 'tune': the tune command, which sets
    # apex up itself for each of two trials and trains through the library: its initialize
    # assigns the library's variable (measured: bitwise the original's over its 2 x 12 steps, 7.3e-5
    # from the same run with autocast off)
    # SimpleCV's shape: the launcher initializes apex, builds the package's Launcher (a file
    # without apex.amp) and binds a function of another file that scales the loss onto it
    # (tl.override_backward(default_backward.amp_backward)); the Launcher runs the forward
    # passes over the chunks of each batch, clips and steps.  The launcher puts its GradScaler
    # on the Launcher (None on the objects other scripts build), the bound function scales
    # through it, the Launcher's file steps, unscales before the clip and runs its forward
    # under autocast through it; 'apex-free': a script without apex.amp that trains the same
    # Launcher with its own backward (that file is edited too, its run unchanged);
    # 'accumulate': two chunks a step
    "r78_bound_backward": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                               native=[], fallbacks=[], given=["toycv/trainer.py"],
                               branches={"apex-free": [], "accumulate": ["--forward-times", "2"]},
                               launchers={"apex-free": "plain.py"}),
    # vissl's shape written fresh: the engine initializes apex in setup() and keeps amp's state;
    # the stepper's backward() scales on the "apex" branch of engine.precision (a plain
    # backward on the others) and its update() steps plainly on the branch after "native",
    # called by __call__ after the engine's clipping hook.  The reader route: backward() scales
    # through the engine module's GradScaler and unscales at once, update() gets `elif
    # engine.precision == "apex":` stepping through it, the forward in __call__ runs under
    # autocast switched by it; the other branches: the engine's own GradScaler, and fp32
    "r82_step_in_sibling_method": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                       metric="loss", native=[], fallbacks=[],
                                       branches={"native": ["--precision", "native"],
                                                 "fp32": ["--precision", "fp32"]}),
    "r72_module_scaler": dict(launcher="train.py", amp=[], fp32=["--no-amp"], steps=24, metric="loss",
                              native=[], fallbacks=[], branches={"off": ["--no-amp"], "tune": []},
                              launchers={"tune": "tune.py"}, given=[]),
    # DeepDeblur's shape: an optimizer holder of another package owns the generator's and the
    # discriminator's optimizers and initializes apex for them in set_amp, which the launcher
    # (no apex) calls only with amp on; the trainer scales the generator's loss through
    # self.optimizer.G and steps the holder, a loss term built by name at run time trains the
    # discriminator through self.optimizer.D inside the trainer's criterion call.  The holder
    # keeps the GradScaler (disabled from its __init__, replaced in set_amp), the sites read it
    # as self.optimizer.scaler: two updates an iteration, as apex's two scale_loss exits
    # (measured: 2.0e-4 from the original, resumed 1.9e-4); its options carry DeepDeblur's
    # max_loss_scale (1024 by default): apex's dynamic scale and the GradScaler start there (the
    # resumed run's scaler state is checked against apex's); 'off': --no-amp (set_amp never runs);
    # 'capped': max_loss_scale 512, 'uncapped': 2**24 (the start 2**16); in both the scaler state at
    # the end is apex's ('scaler_states')
    "r77_held_optimizers": dict(launcher="main.py", amp=[], fp32=["--opt-level", "O0"], steps=24,
                                metric="loss", native=[], fallbacks=[], scaler_states=["capped", "uncapped"],
                                branches={"off": ["--no-amp"], "capped": ["--max-loss-scale", "512"],
                                          "uncapped": ["--max-loss-scale", str(2.0**24)]}),
    # the reader route with an import cycle: the set-up module imports the engine module (it
    # registers the engines) and initializes apex; the launcher (no apex) builds the engine its
    # options name from the registry, so no call chain reaches the engine's update, which scales
    # and steps, nor its checkpoints with amp's state, nor the module-level function reading
    # apex's loss scale.  The set-up module keeps the GradScaler in a module-level variable
    # (APX252); the engine's functions import it when they run (an import at the engine's top
    # could run while the set-up module is half made); 'off': --no-amp (enabled=False)
    # cvpods' shape: the default runner initializes apex in its __init__ (config: FP16 on, type
    # APEX), its base runner's step (no apex) runs the forward pass and stores the summed loss,
    # the optimization hook of another file reads it off self.trainer (set by register_hooks as
    # a weakref.proxy of the runner), scales it, clips and steps; a wrapper module probes
    # apex's state (is_amp_training) only to gate its float_function, re-exported by its
    # package.  The runner keeps the GradScaler (disabled off the APEX path), the hook scales
    # through self.trainer.scaler and steps/unscales under its own switch (a plain runner
    # carries none), the step runs its forward under autocast while an enabled GradScaler is on
    # the runner, the probe goes (APX254, APX262).  The checkpoints keep no amp state
    # ('saves': False): the resumed runs restart the loss scale on both sides; 'fp32': the
    # config's FP16 off; 'plain': a script training the simple runner with the hook for fp32
    "r80_runner_hook": dict(launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss",
                            native=[], fallbacks=[], saves=False, given=["toypods/engine/base_runner.py",
                                                                             "toypods/utils/__init__.py"],
                            branches={"fp32": ["--fp32"], "plain": []}, launchers={"plain": "plain.py"}),
    "r75_registry_engine_imported_by_its_initializer": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        branches={"off": ["--no-amp"]}),
    # FARM's shape: the optimization module sets apex up when an opt level is given, the
    # trainer of another module scales when its own use_amp is set and runs a plain backward
    # otherwise, then (at each accumulation boundary) clips apex's master params or the
    # model's and steps on one shared line.  The optimization module keeps the GradScaler in
    # a module-level variable (APX252), the shared step goes under the trainer's test
    # (``if self.use_amp: scaler.step ... else: optimizer.step()``), unscale_ goes into the
    # amp branch's clip, the trainer's forward pass (in its caller) runs under autocast keyed
    # on that GradScaler; its optimizer lookup by name still tries apex.optimizers (APX107).
    # The shape keeps no amp state in its checkpoints ('saves': False); 'accumulate': two
    # backwards a step; 'off': --no-amp (apex never set up)
    "r81_shared_step_reader": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=["APX107"],
        fallbacks=[], saves=False, branches={"off": ["--no-amp"], "accumulate": ["--grad-acc-steps", "2"]}),
    # BERT-for-RRC-ABSA's shape: MetaTrainer._forward() overrides the base's scaling method
    # (another file) and scales through the base's self.scaler; the base's _train_batch()
    # unscales, clips and steps; the meta step on its own optimizer stays plain
    "r86_subclass_scales_base_steps": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        branches={"off": ["--no-fp16"], "base": ["--kind", "base"]}),
    # BERT-for-RRC-ABSA's lm trainer: train() initializes, _forward() scales, and the launcher
    # evaluates with a fresh trainer that never trains, then with the training one before and
    # after train(): __init__ creates the GradScaler disabled (APX261), so those evaluations run
    # in fp32 until train() replaced it, as apex's did before its initialize (before: the
    # migrated run stopped with AttributeError: no self.scaler); each evaluation's loss and
    # whether it ran in float16 go into the compared parameters; 'off': --no-fp16
    "r88_evaluate_before_train": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        branches={"off": ["--no-fp16"]}),
    # DL-Art-School's shape: the trainer initializes apex in its own __init__ (one loss scaler
    # per training step, num_losses=len(...)) and derives from a base class of another module
    # that saves and resumes amp's state on self; a feature model no script builds derives from
    # that base too.  The trainer keeps its one GradScaler on self where it is created (APX259),
    # the base's methods read it there; the checkpoint's loss_scaler0/loss_scaler1 resume into
    # that GradScaler (loss_scaler0, as for every loss of one GradScaler: 'loss_ids'), whose
    # scale then ends where apex's loss_scaler0 did; its count of clean steps is not compared
    # ('counts'): each step updates the one GradScaler (two updates an iteration), where apex
    # counted once an iteration per loss id, as in DL-Art-School's native steps.py; 'off': --no-fp16
    # DeepGNN's shape without Horovod: the base's _train_batch() scales the loss, hands it to
    # its backward hook, clips and calls its step hook; RingTrainer (another file, no apex)
    # overrides both hooks: its backward reduces the scaled gradients (synchronize(), a
    # halving), its step steps inside skip_synchronize().  The base keeps the GradScaler on
    # self, steps its hook through it and unscales before the clip; the override's step goes
    # through the same GradScaler, with its update (APX257: ring.py edited, 'given').
    # 'off': --no-fp16 (a plain step of the base's own); 'base': the base trainer alone
    "r90_override_steps_through_base_scaler": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        given=["trainers/ring.py"], branches={"off": ["--no-fp16"], "base": ["--kind", "half"]}),
    "r83_base_state_of_initializing_subclass": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[], fallbacks=[],
        loss_ids=2, counts=False, branches={"off": ["--no-fp16"]}),
    # mmgeneration's shape (the reader route, APX252, with loss ids): the initializer helper of the
    # runners' package (called by the apex-free training API) keeps one GradScaler per loss id,
    # sized from the num_losses of its **init_args when it runs, on the device of the models it is
    # handed; the GAN built by name scales loss ids 0/1 beside the runner's own GradScaler branch
    # and a plain one, its autocast on the device of the optimizer each loss steps; the
    # regularizers read scaler i's scale, the runner keeps their states in its checkpoints.
    # 'scale-512': --loss-scale 512 (static); 'native': the runner's own GradScaler (apex off); 'noreg': the
    # regularizers' flag off
    "r76_registry_gan_loss_ids": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="distance", native=[],
        fallbacks=[], loss_ids=2,
        branches={"off": ["--no-amp"], "scale-512": ["--loss-scale", "512"], "native": ["--no-amp", "--fp16-scaler"],
                  "noreg": ["--reg-no-scaler"]}),
    # DLE-BERT run_squad.py's shape: a clipper class of its own on amp.master_params(optimizer)
    # after every backward, right before the if that steps at the accumulation boundary (count
    # 1 by default); every run here accumulates 2 backwards per step.  The clipper moves into
    # that if after unscale_ (APX263): it clips the summed gradients once per step, where apex
    # clipped the running sum after each backward; at --max-norm 0.35 the sums of a step are
    # clipped (1.6e-2 from an unclipped run), the half sums never, so the runs match
    # (measured 3.9e-5); before, the migrated run raised at the second unscale_.
    # 'count-1': the default count; 'amp-off': --no-fp16; 'tight' (differs): --max-norm 0.1
    # clips the half sums too under apex (measured 8.6e-3), the finding says so.  The resumed
    # GradScaler counts steps where apex counted backwards (APX314): its count is not compared
    "r92_clipper_before_accumulation_step": dict(
        launcher="train.py", amp=["--gradient_accumulation_steps", "2"],
        fp32=["--opt-level", "O0", "--gradient_accumulation_steps", "2"], steps=24, metric="loss", native=[],
        fallbacks=[], counts=False, branches={"count-1": ["--gradient_accumulation_steps", "1"], "amp-off": ["--no-fp16"]},
        differs={"tight": ["--max-norm", "0.1"]}),
    # CuLE's A2C shape (sweep16): a rollout runs the model under torch.no_grad() (environment steps,
    # the returns summed in an if holding a loop) before the training forward pass; the loss is
    # backed plainly under --cpu-train, else through amp.scale_loss, and the master params are
    # clipped; the initialize, in utils/initializers.py's model_initialize(), runs only without
    # --cpu-train, beside a print of apex.amp's version.  The region starts after the rollout
    # (APX264: its forward passes run in float32, where apex's O1 ran them in float16; the
    # returns reach the loss scaled by 0.05, so the runs still match within NATIVE_REL),
    # the version print goes (APX265) and model_initialize returns the GradScaler, disabled under
    # --cpu-train, where the plain branch trains in fp32 as apex's did ('cpu-train')
    "r95_rollout_before_cpu_branch": dict(
        launcher="train.py", amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", native=[],
        fallbacks=[], saves=False, branches={"cpu-train": ["--cpu-train"], "no-gae": ["--no-gae"]}),
}

_IMPORT = re.compile(r"^\s*(from\s+(apex|apexcompat)\b|import\s+(apex|apexcompat)\b)", re.M)


def _migrate_native(directory: Path) -> dict:
    return _migrate(directory, "native")  # in place, --allow-no-vcs, JSON report


def _outcome(directory: Path) -> str:
    """'native' when no file of the migrated repository imports apexcompat, else 'fallback'."""
    return "fallback" if any(_IMPORT.search(text) for text in _python_files(directory).values()) else "native"


def _plan_runs(group: str, name: str, root: Path, work: Path, outcome: str = "") -> List[dict]:
    """The runs of one layout: 'orig' (fake apex; writes the half-way checkpoint) or 'migrated'."""
    cfg = LAYOUTS[name]
    steps, half = cfg["steps"], cfg["steps"] // 2
    if group == "orig":
        blocked: List[str] = []
    else:
        blocked = ["apex", "apexcompat"] if outcome == "native" else ["apex"]
    sys_path = [str(root), str(SCRIPTS_DIR)] + ([str(FAKE_APEX)] if group == "orig" else [])
    ckpt = work / f"orig-{name}-half.ckpt.pt"
    variants = {"full": ["--steps", str(steps)]}
    if group == "orig":
        variants["full"] += ["--ckpt-out", str(work / f"orig-{name}-full.ckpt.pt")]
        variants["half"] = ["--steps", str(half), "--ckpt-out", str(ckpt)]
        variants["fp32"] = ["--steps", str(steps)]  # the original at O0: the reference of the autocast check
    else:
        variants["resumed"] = ["--steps", str(half), "--resume", str(ckpt),
                               "--ckpt-out", str(work / f"{group}-{name}-resumed.ckpt.pt")]
    branches = {**cfg.get("branches", {}), **cfg.get("differs", {})}
    for branch in branches:  # the launcher's other branches, both groups
        variants[branch] = ["--steps", str(steps), "--ckpt-out", str(work / f"{group}-{name}-{branch}.ckpt.pt")]
    scripts = cfg.get("launchers", {})  # a branch run by another launcher of the layout
    return [{
        "id": f"{group}:{name}:{variant}", "script": str(root / scripts.get(variant, cfg["launcher"])),
        "cwd": str(work), "root": str(root),
        # the argparse REMAINDER of r7 takes what follows the first positional: options go
        # first, a branch's own arguments (r7's config overrides) last
        "argv": argv + ["--params-out", str(work / f"{group}-{name}-{variant}.params.pt")]
        + cfg["fp32" if variant == "fp32" else "amp"] + branches.get(variant, []),
        "env": {}, "blocked": blocked, "sys_path": sys_path,
    } for variant, argv in variants.items()]


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("e2e-repos")
    work = root / "work"
    work.mkdir()
    dirs = {name: root / name for name in LAYOUTS}
    for name, directory in dirs.items():
        shutil.copytree(REPOS_DIR / name, directory, ignore=shutil.ignore_patterns("__pycache__"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = dict(zip(dirs, pool.map(_migrate_native, dirs.values())))
        after_first = {name: _python_files(directory) for name, directory in dirs.items()}
        second = dict(zip(dirs, pool.map(_migrate_native, dirs.values())))
    orig = [run for name in LAYOUTS for run in _plan_runs("orig", name, REPOS_DIR / name, work)]
    outcome = {name: _outcome(directory) for name, directory in dirs.items()}
    # native layouts first: a fallback run imports apexcompat, a native one must never see it
    ordered = sorted(LAYOUTS, key=lambda n: outcome[n] != "native")
    migrated = [run for name in ordered for run in _plan_runs("migrated", name, dirs[name], work, outcome[name])]
    runs = {**_run_process(orig, work, "repos-orig"), **_run_process(migrated, work, "repos-migrated")}
    return {"work": work, "dirs": dirs, "reports": reports, "runs": runs, "second": second,
            "after_first": after_first, "outcome": outcome}


def _run(repos: dict, group: str, name: str, variant: str) -> dict:
    result = repos["runs"][f"{group}:{name}:{variant}"]
    assert result["ok"], f"{group} {name} {variant} failed:\n{result['error']}\n--- stdout ---\n{result['stdout']}"
    return result


def _params(repos: dict, group: str, name: str, variant: str) -> Dict[str, Any]:
    _run(repos, group, name, variant)
    return _flatten(torch.load(repos["work"] / f"{group}-{name}-{variant}.params.pt"))


def _python_files(directory: Path) -> Dict[str, str]:
    return {p.relative_to(directory).as_posix(): p.read_text() for p in sorted(directory.rglob("*.py"))}


def _native(repos: dict, name: str) -> None:
    """Skip a check of native output where the tool fell back to the shim (asserted elsewhere)."""
    if repos["outcome"][name] != "native":
        pytest.skip(f"{name}: the tool keeps apexcompat.amp here (test_migration_outcome_per_layout)")


def _autocast_gap(repos: dict, name: str) -> bool:
    """A native output whose forward may run in fp32 (LAYOUTS 'gap'): seen as fp32 == O0."""
    return bool(LAYOUTS[name].get("gap")) and _rel_diff(
        _params(repos, "migrated", name, "full"), _params(repos, "orig", name, "fp32")) == 0.0


def _assert_matches(repos: dict, a: dict, b: dict, name: str, what: str) -> None:
    if repos["outcome"][name] != "native":
        tol: dict = TIGHT
    else:
        tol = {"rel": FP16_REL if _autocast_gap(repos, name) else NATIVE_REL}
    if "rel" in tol:
        measured = _rel_diff(a, b)
        assert measured <= tol["rel"], f"{what}: ||a - b|| / ||b|| = {measured:.3g} > {tol['rel']}"
    else:
        _assert_close(a, b, what, **tol)


# ---------------------------------------------------------------------------- migration


@pytest.mark.parametrize("name", LAYOUTS)
def test_migration_outcome_per_layout(repos, name):
    """Native (no apex or apexcompat import anywhere, no manual work but the listed codes), or a
    shim fallback with one of the exact sets of findings LAYOUTS pins; never half and half."""
    cfg, report, directory = LAYOUTS[name], repos["reports"][name], repos["dirs"][name]
    assert report["summary"]["internal_errors"] == 0, report
    files = _python_files(directory)
    assert files.keys() == _python_files(REPOS_DIR / name).keys()
    for path, text in files.items():
        compile(text, path, "exec")
    assert not [p for p, t in files.items() if re.search(r"^\s*(from\s+apex\b|import\s+apex\b)", t, re.M)]
    manual = sorted((f["path"], f["line"], f["message"].replace(f"{directory}/", ""))
                    for f in report["findings"] if f["needs_manual_work"])
    if repos["outcome"][name] == "native":
        codes = [f["code"] for f in report["findings"] if f["needs_manual_work"]]
        assert codes == (cfg["native"] or []), manual
    else:
        assert manual in [sorted(findings) for findings in cfg["fallbacks"]], manual
        # APX270: an apex.amp import other files take from its module, kept on the shim for them
        codes = {f["code"] for f in report["findings"] if f["needs_manual_work"]}
        assert codes and codes <= {"APX220", "APX270"}, codes


@pytest.mark.parametrize("name", LAYOUTS)
def test_second_migration_is_a_no_op_with_the_same_findings(repos, name):
    """The migrated repository (native, or a fallback's apexcompat.amp files, which are inputs of
    --to native too) migrated again: nothing changes, the same sites still need a human."""
    second = repos["second"][name]
    assert second["summary"]["files_changed"] == 0, second["summary"]
    assert _python_files(repos["dirs"][name]) == repos["after_first"][name]

    def manual(report: dict) -> List[tuple]:
        return sorted((f["path"], f["code"]) for f in report["findings"] if f["needs_manual_work"])

    assert manual(second) == manual(repos["reports"][name])


@pytest.mark.parametrize("name", LAYOUTS)
def test_files_without_amp_stay_byte_identical(repos, name):
    original, migrated = _python_files(REPOS_DIR / name), _python_files(repos["dirs"][name])
    changed = {p for p in original if original[p] != migrated[p]}
    uses_amp = {p for p, text in original.items() if re.search(r"\bamp\.", text)}
    # the files of functions given the GradScaler where apex.amp was passed, and those
    # without apex.amp whose unpacking of a model factory's result takes it, or whose apex
    # import guard goes (r65's availability flag) ('given')
    given = set(LAYOUTS[name].get("given", []))
    assert changed <= uses_amp | given, changed - uses_amp - given
    if repos["outcome"][name] == "native":
        assert changed == {p for p in uses_amp if _IMPORT.search(original[p])} | given


# ---------------------------------------------------------------------------- training


@pytest.mark.parametrize("name", LAYOUTS)
@pytest.mark.parametrize("group", ("orig", "migrated"))
def test_runs_complete_and_the_metric_decreases(repos, group, name):
    cfg = LAYOUTS[name]
    values = _metric(_run(repos, group, name, "full")["stdout"], cfg["metric"])
    assert len(values) == cfg["steps"], values
    assert sum(values[-4:]) < 0.7 * sum(values[:4]), (group, values)


@pytest.mark.parametrize("name", LAYOUTS)
def test_native_output_trains_with_an_enabled_cpu_grad_scaler(repos, name):
    """The premise of the comparisons: the migrated launcher's GradScaler followed the CPU device
    and was enabled (its checkpoint holds a scale, a disabled one saves {}), and it never
    imported apexcompat (blocked by the runner, so the run would have failed)."""
    _native(repos, name)
    _run(repos, "migrated", name, "resumed")
    if not LAYOUTS[name].get("scaled", True):
        pytest.skip(f"{name}: no loss is scaled anywhere, in the original or the migrated layout")
    if not LAYOUTS[name].get("saves", True):
        pytest.skip(f"{name}: its checkpoints keep no amp state (the float16 autocast test shows the GradScaler on)")
    states = torch.load(repos["work"] / f"migrated-{name}-resumed.ckpt.pt")["amp"]
    for state in states if isinstance(states, list) else [states]:
        assert "scale" in state and state["scale"] >= 1.0, states
    warned = repos["runs"][f"migrated:{name}:full"]["warnings"]
    assert not [w for w in warned if "CUDA" in w and "Disabling" not in w], warned


@pytest.mark.parametrize("name", LAYOUTS)
def test_native_output_runs_no_cuda_autocast_on_the_cpu_host(repos, name):
    """autocast follows the device the launcher chose: no 'CUDA is not available ... Disabling'."""
    _native(repos, name)
    warned = [w for w in repos["runs"][f"migrated:{name}:full"]["warnings"] if "Disabling" in w]
    if warned and _autocast_gap(repos, name):
        pytest.xfail(LAYOUTS[name]["gap"])
    assert not warned


@pytest.mark.parametrize("name", LAYOUTS)
def test_native_forward_really_ran_in_float16_autocast(repos, name):
    """The migrated run is not the fp32 run: a forward left outside autocast (or under an autocast
    that disabled itself) with a power-of-two loss scale is bitwise the original's O0 run
    (measured: r1, 0.0), while fp16 autocast moves the weights by fp16 rounding (measured
    ||native - O0|| / ||O0|| >= 4.4e-4).  The comparison with the O1 run alone cannot tell: an
    fp32 run is within FP16_REL of it."""
    _native(repos, name)
    if _autocast_gap(repos, name):
        pytest.xfail(LAYOUTS[name]["gap"])
    native, o0 = _params(repos, "migrated", name, "full"), _params(repos, "orig", name, "fp32")
    assert _rel_diff(native, o0) > 1e-5, "the migrated forward ran in fp32"


@pytest.mark.parametrize("name", LAYOUTS)
def test_migrated_matches_the_original_run_through_apexcompat(repos, name):
    _assert_matches(repos, _params(repos, "migrated", name, "full"), _params(repos, "orig", name, "full"), name,
                    "migrated vs original O1")


@pytest.mark.parametrize("name", LAYOUTS)
def test_apex_checkpoint_written_by_the_original_resumes_in_the_migrated_layout(repos, name):
    cfg = LAYOUTS[name]
    _run(repos, "orig", name, "half")
    stdout = _run(repos, "migrated", name, "resumed")["stdout"]
    steps = [int(s) for s in re.findall(rf"^metric {cfg['metric']} (\d+) ", stdout, re.M)]
    assert steps == list(range(cfg["steps"] // 2, cfg["steps"])), "the resumed run did not start where the checkpoint ended"
    # apex never scaled a loss, or the shape saves no amp state: no loss-scaler state on either side
    if not cfg.get("scaled", True) or not cfg.get("saves", True):
        assert "amp" not in torch.load(repos["work"] / f"orig-{name}-half.ckpt.pt")
        assert "amp" not in torch.load(repos["work"] / f"migrated-{name}-resumed.ckpt.pt")
        _assert_matches(repos, _params(repos, "migrated", name, "resumed"), _params(repos, "orig", name, "full"),
                        name, "migrated, resumed from the original's checkpoint, vs the uninterrupted original")
        return
    entry = torch.load(repos["work"] / f"orig-{name}-half.ckpt.pt")["amp"]
    # num_losses=2
    two_ids = name in ("r3_model_owned_step", "r52_partial_backward_gan", "r56_helper_called_from_plain_file",
                       "r66_trainer_built_by_name", "r79_loss_from_handed_outputs")
    ids = cfg.get("loss_ids", 2 if two_ids else 1)
    assert set(entry) == {f"loss_scaler{i}" for i in range(ids)}, entry
    # the scaler state at the end equals the uninterrupted original's: the scale rarely moves on
    # these models, so this is what proves the checkpoint's scaler state was loaded (the count of
    # clean steps goes on from the checkpoint's instead of restarting at 0)
    resumed = torch.load(repos["work"] / f"migrated-{name}-resumed.ckpt.pt")["amp"]
    straight = torch.load(repos["work"] / f"orig-{name}-full.ckpt.pt")["amp"]
    if repos["outcome"][name] == "native":
        # one GradScaler state per apex loss id (r3: num_losses=2 saves their list)
        for loss_id, state in enumerate(resumed if isinstance(resumed, list) else [resumed]):
            apex_view = {"loss_scale": state["scale"], "unskipped": state["_growth_tracker"]}
            expected = dict(straight[f"loss_scaler{loss_id}"])
            if not cfg.get("counts", True):
                # apex's static scale of 1 skips all its bookkeeping (spec 6.3's short-cut:
                # unskipped stays 0); the GradScaler counts, and never grows at 10**9 (r83: one
                # GradScaler updated by each of two loss ids counts twice an iteration)
                apex_view["unskipped"] = expected["unskipped"] = None
            assert apex_view == expected, (resumed, straight)
        # 'loss_ids' without a list: one GradScaler serves every loss id (it resumed from loss_scaler0)
        one = "loss_ids" in cfg and not isinstance(resumed, list)
        assert len(resumed if isinstance(resumed, list) else [resumed]) == (1 if one else len(straight)), (
            resumed, straight)
    else:
        assert resumed == straight
    _assert_matches(repos, _params(repos, "migrated", name, "resumed"), _params(repos, "orig", name, "full"), name,
                    "migrated, resumed from the apex checkpoint, vs the uninterrupted original")


BRANCHES = [(name, branch) for name, cfg in LAYOUTS.items() for branch in cfg.get("branches", {})]


@pytest.mark.parametrize(("name", "branch"), BRANCHES)
def test_other_branches_of_the_launcher_match_the_original(repos, name, branch):
    """A launcher's other configurations train the same way: the metric decreases and the
    weights track the original's.  r10, r14, r17: a static loss_scale=128.0 instead of the dynamic
    one stays put in both; r14, r17: the task's own native GradScaler; r17: two micro-steps per
    step; r12 and r13 'off', r14 and r17 'none', r7 'unset' (its switch None): apex never set up, so the migrated run is the original fp32 run bit for bit and
    neither checkpoint has an amp entry; r36 'apex-free': the script without apex.amp, fp32, the
    same; r39 'own-scaler': the trainer's own GradScaler, whose state matches the original's."""
    for group in ("orig", "migrated"):
        values = _metric(_run(repos, group, name, branch)["stdout"], LAYOUTS[name]["metric"])
        assert len(values) == LAYOUTS[name]["steps"] and sum(values[-4:]) < 0.7 * sum(values[:4]), (group, values)
    migrated_params, original_params = _params(repos, "migrated", name, branch), _params(repos, "orig", name, branch)
    original = torch.load(repos["work"] / f"orig-{name}-{branch}.ckpt.pt")
    migrated = torch.load(repos["work"] / f"migrated-{name}-{branch}.ckpt.pt")
    if branch in ("off", "none", "tune-off", "unset", "apex-free"):
        assert _max_diff(migrated_params, original_params) == 0.0, "migrated vs original, apex never set up"
        assert "amp" not in original and "amp" not in migrated, (original.keys(), migrated.keys())
        return
    _assert_matches(repos, migrated_params, original_params, name, f"migrated vs original, {branch} branch")
    if branch in LAYOUTS[name].get("scaler_states", ()) and repos["outcome"][name] == "native":
        # where the dynamic scale started (apex's max_loss_scale) shows in the state at the end
        states = migrated["amp"] if isinstance(migrated["amp"], list) else [migrated["amp"]]
        apex_view = [{"loss_scale": s["scale"], "unskipped": s["_growth_tracker"]} for s in states]
        assert apex_view == [original["amp"][f"loss_scaler{i}"] for i in range(len(states))], (migrated, original)
    if branch == "own-scaler":  # r39: the trainer's own GradScaler still scales, as it did
        assert original["scaler"]["scale"] > 1.0 and migrated["scaler"] == original["scaler"], (
            original["scaler"], migrated["scaler"])
    if branch == "static":
        original, migrated = original["amp"]["loss_scaler0"], migrated["amp"]
        assert original["loss_scale"] == 128.0 and migrated["scale"] == 128.0, (original, migrated)


def test_native_checkpoint_rewinds_the_grad_scaler(repos):
    """r38 'round-trip': the migrated run saves a native checkpoint half way, trains two more
    steps, and a second restorer rewinds it to that checkpoint: its GradScaler ends where the
    uninterrupted original's loss scaler did (without the rewind its count of clean steps would
    be two ahead), and the run where the original's round trip ended."""
    name = "r38_restorer_class"
    _native(repos, name)
    _run(repos, "migrated", name, "round-trip")
    migrated = torch.load(repos["work"] / f"migrated-{name}-round-trip.ckpt.pt")
    straight = torch.load(repos["work"] / f"orig-{name}-full.ckpt.pt")
    assert migrated["step"] == straight["step"] == LAYOUTS[name]["steps"], (migrated["step"], straight["step"])
    state = migrated["amp"]
    apex_view = {"loss_scale": state["scale"], "unskipped": state["_growth_tracker"]}
    assert apex_view == straight["amp"]["loss_scaler0"], (state, straight["amp"])


def _run_without_apex(directory: Path, argv: List[str]) -> "subprocess.CompletedProcess[str]":
    """Runs ``argv`` (a script of ``directory`` and its arguments) as __main__ with apex and
    apexcompat unimportable."""
    code = (
        "import runpy, sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('apex', 'apexcompat'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"sys.argv = {argv!r}\n"
        f"runpy.run_path({argv[0]!r}, run_name='__main__')\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(directory), str(SCRIPTS_DIR)]))
    return subprocess.run([sys.executable, "-c", code], cwd=directory, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_script_without_a_grad_scaler_still_loads_the_model(repos):
    """r44: the migrated evaluate.py calls the checkpoint loader, which now takes the GradScaler
    as ``scaler=None``, without one: it restores the model from the original's apex checkpoint
    and leaves the loss-scaler entry alone, with apex and apexcompat unimportable."""
    name = "r45_optional_checkpoint_scaler"
    _native(repos, name)
    _run(repos, "orig", name, "half")
    checkpoint = repos["work"] / f"orig-{name}-half.ckpt.pt"
    done = _run_without_apex(repos["dirs"][name], ["evaluate.py", str(checkpoint)])
    assert done.returncode == 0, done.stderr
    assert re.search(rf"^step {LAYOUTS[name]['steps'] // 2}: eval loss ", done.stdout, re.M), done.stdout


def test_a_script_that_runs_alone_still_loads_through_the_method_without_a_grad_scaler(repos):
    """r101: the migrated average.py calls ProposalNet.loadFromFile with its flag on and no
    GradScaler (the method takes it as ``scaler=None``): it restores the network from the
    original's apex checkpoint and leaves the loss-scaler entry alone, with apex and apexcompat
    unimportable (apex's amp.load_state_dict raised there: no amp.initialize ever ran)."""
    name = "r101_method_loader_beside_a_script"
    _native(repos, name)
    _run(repos, "orig", name, "half")
    checkpoint = repos["work"] / f"orig-{name}-half.ckpt.pt"
    out = repos["work"] / f"{name}-average.pt"
    done = _run_without_apex(repos["dirs"][name], ["average.py", str(checkpoint), str(checkpoint),
                                                    "--use-amp", "1", "--out", str(out)])
    assert done.returncode == 0, done.stderr
    saved = torch.load(checkpoint, map_location="cpu")["model"]
    averaged = torch.load(out)
    assert set(averaged) == set(saved)
    assert all(torch.equal(averaged[k], saved[k].float()) for k in saved if saved[k].is_floating_point())


def test_the_render_run_loads_an_apex_checkpoint_without_a_grad_scaler(repos):
    """r107: the migrated train.py --render runs render_only, which loads both networks through
    their loadFromFile with the flag on and no GradScaler, from the original's apex checkpoint,
    with apex and apexcompat unimportable, and renders what the original trained."""
    name = "r107_subclass_built_loader_render_or_train"
    _native(repos, name)
    _run(repos, "orig", name, "half")
    checkpoint = repos["work"] / f"orig-{name}-half.ckpt.pt"
    done = _run_without_apex(repos["dirs"][name], ["train.py", "--render", "--resume", str(checkpoint)])
    assert done.returncode == 0, done.stderr
    assert "render mse" in done.stdout


@pytest.mark.parametrize("name", ("r49_clip_inside_scale_loss", "r60_clip_inside_scale_loss_literal_level"))
def test_a_clip_kept_inside_the_backward_raises_when_backwards_accumulate(repos, name):
    """r49, r60: the migrated script clips the scaled gradients of one backward and unscales
    after, which is apex's O1 only while every backward is a step (the count's default, 1):
    with two backwards per step the second unscale_ raises, where a silent run would clip their
    sum."""
    _native(repos, name)
    done = _run_without_apex(repos["dirs"][name], ["train.py", "--gradient-accumulation", "2", "--steps", "4"])
    assert done.returncode != 0 and "unscale_() has already been called" in done.stderr, done.stderr


def test_a_clip_kept_inside_the_backward_differs_under_o2(repos):
    """r49: the opt level comes from a flag whose default is O1, so the default run matches the
    original (test_migrated_matches_the_original_run_through_apexcompat), and the APX330
    finding names the flag and what changes under O2: apex's clip inside the block read the
    still empty master gradients and did nothing, the native one clips the scaled gradients at
    the threshold, so the two O2 runs part (measured in the last test)."""
    name = "r49_clip_inside_scale_loss"
    _native(repos, name)
    (finding,) = [f for f in repos["reports"][name]["findings"] if f["code"] == "APX330"]
    assert finding["path"] == "train.py" and finding["severity"] == "warning", finding
    assert "opt_level=args.opt_level: O1 under the default flags" in finding["message"], finding
    assert "a run that sets the opt level to O2 trains otherwise than apex did" in finding["message"], finding
    native, original = _params(repos, "migrated", name, "o2"), _params(repos, "orig", name, "o2")
    assert _rel_diff(native, original) > NATIVE_REL, "the O2 runs no longer part: reword the finding"


def test_a_clipper_moved_into_the_step_if_differs_where_apex_clipped_half_sums(repos):
    """r92: the clipper right before the accumulation if moved into it (APX263), so with two
    backwards per step it clips their sum once; apex clipped the running sum after each
    backward.  The default threshold never reaches a half sum and the runs match
    (test_migrated_matches_the_original_run_through_apexcompat); 'tight' reaches them, the
    finding says that this is where the two part, and they do (measured in the last test)."""
    name = "r92_clipper_before_accumulation_step"
    _native(repos, name)
    (finding,) = [f for f in repos["reports"][name]["findings"] if f["code"] == "APX263"]
    assert finding["path"] == "train.py" and finding["severity"] == "warning", finding
    assert "the same unless a partial sum exceeds the threshold" in finding["message"], finding
    native, original = _params(repos, "migrated", name, "tight"), _params(repos, "orig", name, "tight")
    assert _rel_diff(native, original) > NATIVE_REL, "the tight runs no longer part: reword the finding"


def test_a_static_scale_stays_after_an_overflow(repos, tmp_path):
    """r68: an overflow at step 5 makes the migrated GradScaler skip that step and keep its
    static scale of 1 (apex kept the scale too, and took the step, leaving the weights inf/nan),
    so the run goes on as the original without step 5.  A scale halved to 0.5 there would
    unscale this loss's gradients, which ignore the scale, into twice their size from then on
    (measured 1.5e-1 from the reference; the kept scale 2.6e-4, fp16 noise)."""
    name = "r68_static_scale_of_one"
    _native(repos, name)
    out = tmp_path / "injected.params.pt"
    done = _run_without_apex(repos["dirs"][name], ["train.py", "--inject-step", "5", "--params-out", str(out)])
    assert done.returncode == 0, done.stderr
    injected = _flatten(torch.load(out))
    _assert_matches(repos, injected, _params(repos, "orig", name, "skip"), name, f"{name} overflow at step 5")


def test_report_measured_differences(repos, capsys):
    """Prints max |a - b| and ||a - b|| / ||b|| behind the tolerances."""
    lines = []
    for name in LAYOUTS:
        cells = [repos["outcome"][name]]
        pairs = {"full~O1": ("full", "full"), "resumed~O1": ("resumed", "full"), "full~O0": ("full", "fp32")}
        branches = {**LAYOUTS[name].get("branches", {}), **LAYOUTS[name].get("differs", {})}
        pairs.update({f"{b}~{b}": (b, b) for b in branches})
        for label, (variant, reference) in pairs.items():
            try:
                a, b = _params(repos, "migrated", name, variant), _params(repos, "orig", name, reference)
            except (AssertionError, KeyError, FileNotFoundError):
                continue  # a failed run: its own test says so
            cells.append(f"{label} {_max_diff(a, b):.1e}/{_rel_diff(a, b):.1e}")
        lines.append(f"{name}: " + ", ".join(cells))
    with capsys.disabled():
        print("\nmigrated vs original, max|a-b| / ||a-b||/||b||\n" + "\n".join(lines))
    assert len(lines) == len(LAYOUTS)


# ---------------------------------------------------------------------------- inference scripts

#: r94: evaluation scripts whose inference initialize (no optimizers) the route follows, run on
#: their own (no training, so not in LAYOUTS): per script, its amp run, its fp32 run and what the
#: migration must report
INFERENCE_LAYOUT = "r94_inference_script"
INFERENCE_RUNS = {
    # timm's validate.py shape: amp_autocast bound to torch.autocast on the apex branch, the
    # warm-up pass outside it wrapped under the branch's switch
    "validate.py": dict(amp=["--apex-amp"], fp32=[]),
    # maskrcnn-benchmark's test_net.py shape: the opt level through a variable, the inference
    # function of another module called per dataset under autocast, switched on that variable
    "test_net.py": dict(amp=["--fp16", "1"], fp32=["--fp16", "0"]),
}


@pytest.fixture(scope="module")
def inference_repo(tmp_path_factory) -> dict:
    """r94 migrated in place, its scripts run at amp and fp32: the originals through fake apex
    (apexcompat.amp: CPU O1 is float16 CPU autocast from the initialize on), the migrated ones
    with apex and apexcompat unimportable."""
    root = tmp_path_factory.mktemp("e2e-inference")
    work, directory = root / "work", root / INFERENCE_LAYOUT
    work.mkdir()
    shutil.copytree(REPOS_DIR / INFERENCE_LAYOUT, directory, ignore=shutil.ignore_patterns("__pycache__"))
    report = _migrate_native(directory)
    after_first = _python_files(directory)
    second = _migrate_native(directory)
    runs: Dict[str, List[dict]] = {"orig": [], "migrated": []}
    for group, where in (("orig", REPOS_DIR / INFERENCE_LAYOUT), ("migrated", directory)):
        for script, cfg in INFERENCE_RUNS.items():
            for variant in ("amp", "fp32"):
                runs[group].append({
                    "id": f"{group}:{script}:{variant}", "script": str(where / script), "cwd": str(work),
                    "root": str(where), "argv": cfg[variant] + ["--out", str(work / f"{group}-{script}-{variant}.pt")],
                    "env": {}, "blocked": [] if group == "orig" else ["apex", "apexcompat"],
                    "sys_path": [str(where), str(SCRIPTS_DIR)] + ([str(FAKE_APEX)] if group == "orig" else []),
                })
    results = {**_run_process(runs["orig"], work, "inference-orig"),
               **_run_process(runs["migrated"], work, "inference-migrated")}
    return {"work": work, "dir": directory, "report": report, "second": second, "after_first": after_first,
            "runs": results}


def _inference_output(repo: dict, group: str, script: str, variant: str) -> Dict[str, Any]:
    result = repo["runs"][f"{group}:{script}:{variant}"]
    assert result["ok"], f"{group} {script} {variant} failed:\n{result['error']}\n--- stdout ---\n{result['stdout']}"
    return {"output": torch.load(repo["work"] / f"{group}-{script}-{variant}.pt")}


def test_inference_scripts_migrate_to_native_autocast(inference_repo):
    """No apex import and no manual work left; each initialize is reported as followed (APX206,
    fixed); a second run changes nothing."""
    report, directory = inference_repo["report"], inference_repo["dir"]
    assert report["summary"]["internal_errors"] == 0, report
    assert not [f for f in report["findings"] if f["needs_manual_work"]], report["findings"]
    assert sorted(f["path"] for f in report["findings"] if f["code"] == "APX206") == sorted(INFERENCE_RUNS)
    files = _python_files(directory)
    assert not [p for p, t in files.items() if _IMPORT.search(t)]
    assert "amp_autocast = partial(torch.autocast" in files["validate.py"].split("elif args.native_amp")[0]
    assert inference_repo["second"]["summary"]["files_changed"] == 0
    assert _python_files(directory) == inference_repo["after_first"]


@pytest.mark.parametrize("script", INFERENCE_RUNS)
def test_migrated_inference_matches_the_original_run_through_apexcompat(inference_repo, script):
    """The migrated script's outputs under CPU float16 autocast match the original's under the
    shim's O1 (NATIVE_REL; measured 0.0, bitwise), are not the fp32 outputs (the forward passes
    really ran in float16: measured ||amp - fp32|| / ||fp32|| >= 4.4e-4; 0.0 with the APX206 TODO
    the route left before), and its fp32 run is the original's, bit for bit."""
    migrated = _inference_output(inference_repo, "migrated", script, "amp")
    original = _inference_output(inference_repo, "orig", script, "amp")
    fp32 = _inference_output(inference_repo, "orig", script, "fp32")
    assert _rel_diff(migrated, original) <= NATIVE_REL, _rel_diff(migrated, original)
    assert _rel_diff(migrated, fp32) > 1e-5, "the migrated forward passes ran in fp32"
    assert torch.equal(_inference_output(inference_repo, "migrated", script, "fp32")["output"], fp32["output"])


# ---------------------------------------------------------------------------- evaluation solver

#: r104: DeScarGAN's shape, main.py choosing the training solver (two initializes, each loss
#: scaled) or the evaluation solver (the same setup copied, its optimizers only zeroed, forward
#: passes only) by --mode; not in LAYOUTS: what is compared is the evaluation's outputs
EVALUATION_LAYOUT = "r104_evaluation_solver"


@pytest.fixture(scope="module")
def evaluation_repo(tmp_path_factory) -> dict:
    """r104 migrated in place; the original trains once through fake apex (the networks both
    evaluations load), then the evaluation runs at O1 and O0, the originals through fake apex,
    the migrated ones with apex and apexcompat unimportable; the migrated training runs too."""
    root = tmp_path_factory.mktemp("e2e-evaluation")
    work, directory = root / "work", root / EVALUATION_LAYOUT
    work.mkdir()
    shutil.copytree(REPOS_DIR / EVALUATION_LAYOUT, directory, ignore=shutil.ignore_patterns("__pycache__"))
    report = _migrate_native(directory)
    after_first = _python_files(directory)
    second = _migrate_native(directory)

    def run(group: str, mode: str, level: str, nets: str) -> dict:
        where = REPOS_DIR / EVALUATION_LAYOUT if group == "orig" else directory
        return {
            "id": f"{group}:{mode}:{level}", "script": str(where / "main.py"), "cwd": str(work), "root": str(where),
            "argv": ["--mode", mode, "--opt-level", level, "--nets", str(work / nets),
                     "--out", str(work / f"{group}-{mode}-{level}.pt")],
            "env": {}, "blocked": [] if group == "orig" else ["apex", "apexcompat"],
            "sys_path": [str(where), str(SCRIPTS_DIR)] + ([str(FAKE_APEX)] if group == "orig" else []),
        }

    results = _run_process([run("orig", "train", "O1", "nets")], work, "evaluation-train")
    original = [run("orig", "test", level, "nets") for level in ("O1", "O0")]
    results.update(_run_process(original, work, "evaluation-orig"))
    migrated = [run("migrated", "test", level, "nets") for level in ("O1", "O0")]
    migrated.append(run("migrated", "train", "O1", "migrated-nets"))
    results.update(_run_process(migrated, work, "evaluation-migrated"))
    return {"work": work, "dir": directory, "report": report, "second": second, "after_first": after_first,
            "runs": results}


def _evaluation_output(repo: dict, group: str, level: str) -> Dict[str, Any]:
    result = repo["runs"][f"{group}:test:{level}"]
    assert result["ok"], f"{group} test {level} failed:\n{result['error']}\n--- stdout ---\n{result['stdout']}"
    return torch.load(repo["work"] / f"{group}-test-{level}.pt")


def test_evaluation_solver_migrates_to_autocast_without_a_scaler(evaluation_repo):
    """No apex import and no manual work left; each initialize of the evaluation solver is
    reported as autocast without a GradScaler (APX229: its optimizers are never stepped and
    never leave test()); the migrated training runs; a second run changes nothing."""
    report, directory = evaluation_repo["report"], evaluation_repo["dir"]
    assert report["summary"]["internal_errors"] == 0, report
    assert not [f for f in report["findings"] if f["needs_manual_work"]], report["findings"]
    stepless = [f for f in report["findings"] if f["code"] == "APX229"]
    assert [f["path"] for f in stepless] == ["eval_solver.py"] * 2, stepless
    assert all("never stepped and never leaves test()" in f["message"] for f in stepless), stepless
    files = _python_files(directory)
    assert not [p for p, t in files.items() if _IMPORT.search(t)]
    assert "GradScaler" not in files["eval_solver.py"] and "GradScaler" in files["train_solver.py"]
    trained = evaluation_repo["runs"]["migrated:train:O1"]
    assert trained["ok"], trained["error"]
    assert evaluation_repo["second"]["summary"]["files_changed"] == 0
    assert _python_files(directory) == evaluation_repo["after_first"]


def test_migrated_evaluation_matches_the_original_run_through_apexcompat(evaluation_repo):
    """The migrated evaluation's outputs under CPU float16 autocast match the original's under
    the shim's O1 (NATIVE_REL), are not the O0 outputs (the forward passes ran in float16), and
    its O0 run is the original's, bit for bit."""
    migrated, original = (_evaluation_output(evaluation_repo, g, "O1") for g in ("migrated", "orig"))
    fp32 = _evaluation_output(evaluation_repo, "orig", "O0")
    for key in ("fakes", "scores"):
        assert _rel_diff({key: migrated[key]}, {key: original[key]}) <= NATIVE_REL, key
        assert _rel_diff({key: migrated[key]}, {key: fp32[key]}) > 1e-5, f"the migrated {key} ran in fp32"
        assert torch.equal(_evaluation_output(evaluation_repo, "migrated", "O0")[key], fp32[key]), key
