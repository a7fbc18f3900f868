"""APX2xx: ``amp.initialize`` (and the old ``amp.init``) -> an on/off switch and one
``GradScaler``; the scaler threaded to every function that needs it; autocast placed around
the forward pass that feeds each ``scale_loss``.

This rule runs first among the apex.amp rules and decides for the whole file: when any
apex.amp site cannot be proven rewritable (see ``_amp_sites``), nothing of apex.amp is
rewritten, every reason is reported, and the imports rule points the file at
``apexcompat.amp`` so that it keeps training exactly as before.

This module holds the decision and the initialize rewrite itself (switch, scaler options,
inference-only calls); availability checks, scaler threading and autocast placement are the
mixins in ``_amp_availability``, ``_amp_threading`` and ``_amp_autocast``."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from ._amp_carrier import carrier_key
from ._amp_autocast import AutocastPlacement, flat_texts
from ._amp_context_var import inference_context_variable
from ._amp_inference import autocast_levels, consecutive_runs, inference_uses, model_names
from ._amp_processor import ProcessorAutocast
from ._amp_availability import AvailabilityChecks, fold
from ._amp_rule import APEX_AMP, LEFT_ON_SHIM, is_empty_shell
from .base import TODO_PREFIX
from ._plain_alternative import SCALER_SWITCHES, attribute_aliases, bound_names, scope_key
from ._amp_threading import ScalerThreading
from ._amp_held import held_attach, held_scaler_in_init
from ._amp_init_scaler import init_scaler_place
from .checkpoints import guard_left_empty
from ._amp_flag_param import record_flags
from ._amp_sites import (
    AMP_STATE_DROPPED,
    AMP_STATE_KEYS,
    AMP_STATE_SETTINGS,
    AmpFile,
    InitSite,
    ScaleLossSite,
    arg_value,
    class_of_method,
    analyse,
    assigned_names,
    code_of,
    enclosing,
    enclosing_function,
    exiting_try,
    inference_load,
    is_main_guard,
    names_in,
    self_name,
    stale_flag,
    string_value,
    unscaled_why,
    walk,
)
from ._with_wrap import wrapped_in_with
from ._edits import (
    NO_GROWTH,
    expression,
    kept_leading,
    move_leading,
    read_todos,
    same_expression,
    statement,
    todo_lines,
    trailing_comment,
    with_leading,
    with_trailing_comments,
)
from ._amp_examples import EXAMPLES, NOOP_EXAMPLES
from ._amp_repo_examples import REPOSITORY_EXAMPLES
from ._plain_step_caller_examples import EXAMPLES as PLAIN_STEP_CALLERS
from ._input_gradient_examples import REFUSED as INPUT_GRADIENT_REFUSALS
from ._amp_device import device_type_at, switched_device
from ._amp_module_scaler import (
    COMMENT,
    availability_try,
    first_body_statement,
    first_definition,
    initialize_only_try,
    leaves_after,
)
from ._amp_setup_loop import setup_loop
from ._amp_none_optimizer import proven_none
from ._amp_unbound import UNBOUND_TODO, unbound_amp_uses
from ._amp_version import remove_version_prints
from ..runner_frameworks import CARRIER_ATTRIBUTE
from ._amp_context_var import LIBRARY_CHECKPOINT_TODO, LIBRARY_WRAPPERS, library_checkpoint_todo
from ._bool_switch import as_bool, scope_at
from ._same_branches import pure_test
from ._run_time_loss_scale import run_time_cap_start, run_time_scale_lines
from ._static_scale import SKIPS_ON_OVERFLOW, STATIC_BACKOFF, run_time_backoff, static_backoff_line

OPT_LEVELS = ("O0", "O1", "O2", "O3")
# positions of initialize's parameters (apex signature)
INIT_PARAMS = {
    "enabled": 2,
    "opt_level": 3,
    "cast_model_type": 4,
    "patch_torch_functions": 5,
    "keep_batchnorm_fp32": 6,
    "master_weights": 7,
    "loss_scale": 8,
    "cast_model_outputs": 9,
    "num_losses": 10,
    "verbosity": 11,
    "min_loss_scale": 12,
    "max_loss_scale": 13,
}
OLD_INIT_PARAMS = {"enabled": 0, "loss_scale": 1, "enable_caching": 2, "verbose": 3, "allow_banned": 4}


def _param(call: cst.Call, name: str, table: Dict[str, int]) -> Optional[cst.BaseExpression]:
    return arg_value(call, table[name], name)


def _paren(code: str, node: cst.BaseExpression) -> str:
    if isinstance(node, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not node.lpar:
        return f"({code})"
    return code


def _joined(parts: List[Tuple[str, bool]]) -> str:
    """The switch text of ``parts`` (see ``_switch_parts``): their ``and``."""
    if len(parts) == 1:
        return parts[0][0]
    return " and ".join(f"({text})" if paren else text for text, paren in parts)


#: the scale apex's dynamic loss scaler starts from (below its max_loss_scale)
APEX_INIT_SCALE = 2.0**16
#: the same as GradScaler ``init_scale`` text
DYNAMIC_START = "65536.0"


def _literal_number(node: Optional[cst.BaseExpression]) -> Optional[float]:
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    text = string_value(node)
    if text is not None:
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _footer_outside(stmt: Any, default_indent: str) -> List[cst.EmptyLine]:
    """The comment lines LibCST gave the block of ``stmt`` (those below its last statement,
    up to the last one indented into the block), printed as they were at ``stmt``'s own
    level: what stays of them when ``stmt`` goes; empty when they hold no comment."""
    block = stmt.body
    if not isinstance(block, cst.IndentedBlock) or not any(line.comment for line in block.footer):
        return []
    indent = default_indent if block.indent is None else block.indent
    return [
        line.with_changes(whitespace=cst.SimpleWhitespace(indent + line.whitespace.value)) if line.indent else line
        for line in block.footer
    ]


def _prune_empty_elifs(node: Any) -> Any:
    """``if a: x  elif b: pass`` / ``if a: x  else: pass`` (the initialize that was there is
    gone) -> ``if a: x``.  A branch holding a TODO this tool wrote stays (DeepGNN: the
    ``else`` whose model-only initialize became ``pass`` under the inference TODO)."""
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _prune_empty_elifs(orelse)
        if is_empty_shell(orelse) and not _holds_our_todo(orelse.body):
            orelse = None
        return node.with_changes(orelse=orelse)
    if (
        isinstance(orelse, cst.Else)
        and is_empty_shell(cst.If(test=cst.Name("True"), body=orelse.body))
        and not _holds_our_todo(orelse.body)
    ):
        return node.with_changes(orelse=None)
    return node


def _holds_our_todo(block: Any) -> bool:
    """Whether ``block`` holds a TODO comment of this tool (written by this run or an earlier one)."""
    return TODO_PREFIX in code_of(block)


def _prune_quiet_elifs(node: Any) -> Any:
    """``_prune_empty_elifs`` for an ``if`` between the initialize and the statement its
    GradScaler follows: only branches without comments (no TODO is lost) whose test calls
    nothing (asking it again could have done something).  An ``if`` whose own branch is
    empty too keeps them: pruned, the whole ``if`` would go with the TODO its branch holds."""
    if is_empty_shell(node.with_changes(orelse=None)):
        return node
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _prune_quiet_elifs(orelse)
        quiet = "#" not in code_of(orelse.body) and not any(
            isinstance(n, (cst.Call, cst.NamedExpr, cst.Await)) for n in walk(orelse.test)
        )
        if is_empty_shell(orelse) and quiet:
            orelse = None
        return node.with_changes(orelse=orelse)
    if isinstance(orelse, cst.Else) and "#" not in code_of(orelse.body):
        return _prune_empty_elifs(node)
    return node


def _negated(node: cst.BaseExpression) -> Tuple[str, bool]:
    """The text of ``not node`` (``a is None`` -> ``a is not None``, ``not a`` -> ``a``) and
    whether it needs parentheses inside an ``and``."""
    flips = {cst.Is: cst.IsNot, cst.IsNot: cst.Is, cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal}
    flips.update({cst.In: cst.NotIn, cst.NotIn: cst.In})
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and not node.lpar:
        target = node.comparisons[0]
        flip = flips.get(type(target.operator))
        if flip is not None:
            op: Any = target.operator
            new_op = flip(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
            return code_of(node.with_changes(comparisons=[target.with_changes(operator=new_op)])), False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) and not node.lpar:
        inner = node.expression
        return code_of(inner), _paren(code_of(inner), inner) != code_of(inner)
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or node.lpar:
        return f"not {code_of(node)}", False
    return f"not ({code_of(node)})", False


def _binds_on_every_path(body: List[Any], stmts: set) -> bool:
    """Whether running ``body`` surely runs one of ``stmts`` (through if/elif/else only)."""
    for stmt in body:
        if stmt in stmts:
            return True
        node = stmt
        while isinstance(node, cst.If) and _binds_on_every_path(list(node.body.body), stmts):
            orelse = node.orelse
            if isinstance(orelse, cst.Else):
                if _binds_on_every_path(list(orelse.body.body), stmts):
                    return True
                break
            node = orelse
    return False


class InitializeRule(AvailabilityChecks, ScalerThreading, ProcessorAutocast, AutocastPlacement):
    """amp.initialize -> switch + GradScaler, scaler threading, autocast placement."""

    CODES = {
        "APX201": (
            "amp.initialize rewritten: the models and optimizers are used as they are, "
            "a GradScaler replaces apex's loss scaler"
        ),
        "APX202": "O2/O3: fp16 model weights and fp32 master weights become fp32 weights under float16 autocast",
        "APX203": "an initialize option with no native counterpart was dropped",
        "APX204": "static loss_scale: GradScaler starts there, never grows, but still skips steps with inf/nan grads",
        "APX205": "loss_scale is chosen at run time and cannot be read where the GradScaler is created (or the "
        "opt level is not a literal O1/O2): set init_scale/growth_interval by hand if it is a number",
        "APX206": (
            "inference-only initialize (no optimizers): the model is cast, or the later uses of the model in its "
            "function run under autocast, or autocast must be added by hand"
        ),
        "APX207": "the scaler is passed to a same-file function as a new parameter",
        "APX208": "amp._amp_state loss-scaler settings became GradScaler arguments, or updates of the "
        "GradScaler where they stand",
        "APX209": "the forward pass was wrapped in torch.autocast",
        "APX210": "autocast could not be placed: wrap the forward pass and loss by hand",
        "APX264": "a gradient-off block before the training forward pass (a rollout, targets) feeds the loss as "
        "data only: the autocast region starts after it, so its forward passes run in float32 (apex's O1 ran "
        "them in float16)",
        "APX265": "a statement that only printed or logged apex.amp's version was removed (the native code does "
        "not use apex.amp); a version read any other way keeps the file on the shim (APX220)",
        "APX211": "old API amp.init(): its handle's scale_loss goes through the GradScaler",
        "APX212": "an apex availability check (amp is None, not amp) became a constant and was simplified",
        "APX213": "the GradScaler created in another file reaches this function or class as a new parameter "
        "(a warning where no file of the repository calls it: a call elsewhere must pass it too)",
        "APX214": "the GradScaler is passed to a function or class of another file that needs it",
        "APX215": "a no-op autocast variable (amp_autocast = suppress) is bound to torch.autocast where "
        "amp.initialize was, so the forward passes it wraps run under autocast as under O1",
        "APX216": "timm's ApexScaler became its NativeScaler; an apex checkpoint's loss scale needs converting "
        "to resume",
        "APX217": "the GradScaler created in a helper is returned to its caller as one more value",
        "APX220": "apex.amp cannot be migrated natively here; the file keeps working through apexcompat.amp",
        "APX221": "the initialize's method runs only under an if: __init__ creates a disabled GradScaler "
        "before it, so every method finds one",
        "APX261": "the GradScaler lives on self and a method other than __init__ creates it where amp.initialize "
        "was: __init__ creates a disabled one first, so a method called before that one (evaluate() on a fresh "
        "trainer) finds it and runs in fp32, as apex did before its initialize",
        "APX238": "amp.initialize under a run-once guard (if not self.ready: ...; self.ready = True): the "
        "GradScaler is created in the guard's branch and __init__ creates a disabled one where it first sets "
        "the flag, so every method finds one",
        "APX239": "amp.scale_loss in a subclass of the class whose method initializes (another file): it uses "
        "the GradScaler that class keeps on self, created where its amp.initialize was",
        "APX222": "an amp._amp_state loss-scaler setting was dropped: GradScaler has no counterpart for it "
        "(a ceiling or floor for the scale), or apex ignored it (a growth interval of a static loss scale)",
        "APX286": "apex.amp (or None) given to a same-file helper that initializes it and otherwise only tests it "
        "(if amp: ...): the caller's test that bound it is given instead, the helper's tests stay, and its uses "
        "of apex.amp's members become the GradScaler's, created where amp.initialize was",
        "APX230": "apex.amp (or None) given to a same-file function whose parameter it fills: the GradScaler "
        "fills that slot, and the function's uses of the parameter become the scaler's",
        "APX276": (
            "a loss computed after the scaled backward of the model's loss, by calls that run no model found "
            "there, and backed before the same step: scaler.unscale_(opt) follows the first backward, as apex "
            "unscaled there, and the second runs plain, outside autocast"
        ),
        "APX271": "a function of another file than the launcher's, given apex.amp (or None) by every call, scales "
        "through that parameter: the launcher gives the GradScaler there, and the function's uses of the "
        "parameter become the scaler's",
        "APX223": "apex.amp given to another file's function that only saves/loads its state: the GradScaler "
        "is given instead",
        "APX242": "apex.amp given to a consumer left as it is (a **kwargs loop, a method of another file's class) "
        "that may load a checkpoint entry into it: ScalerCheckpoint(scaler) is given, which also loads apex.amp's "
        "entries",
        "APX225": "the runner a framework (mmcv) hands its hooks carries the GradScaler: the launcher puts it "
        "on the runner it builds, hooks and runner methods read it from there",
        "APX234": "amp.<member> where the name amp is not bound (apex.amp imported only inside another "
        "function): that line raises NameError, in the original too",
        "APX237": "apex.amp kept on a carrier object (args.amp = amp) becomes the GradScaler on that object "
        "(args.scaler = scaler): the functions handed the carrier read it from there",
        "APX244": "a model factory of another file returns the GradScaler its amp.initialize makes as one more "
        "value; its one caller unpacks it and passes it on to what scales the losses",
        "APX235": "a file without apex.amp calls a model factory that now returns the GradScaler as one more value: "
        "its unpacking takes it into `_` (a call discarded or indexed by a literal is left as it is); where that "
        "file also calls the helpers that scale the losses, it binds the GradScaler, passes it to them as "
        "`scaler=` (the list of GradScalers as `scalers=`, one per loss id, where each call gives the helper's "
        "loss_id a number) and puts autocast around the forward passes feeding them",
        "APX245": "amp.initialize called again in sequence with the same options: apex replaced its loss scaler "
        "there, so one GradScaler serves every optimizer",
        "APX246": "amp.initialize in a method again on the models and optimizer __init__ already passed through "
        "it (a restore before amp.load_state_dict): apex raised RuntimeError there; it goes, and the GradScaler "
        "__init__ creates serves that path too",
        "APX229": "no file of the repository scales a loss, or none is reached from the initializing file (apex "
        "trained unscaled), or the initialize's optimizers are never stepped and never leave its function: each "
        "initialized model's forward is wrapped in torch.autocast and no GradScaler is created",
        "APX280": "amp.load_state_dict(...) beside inference-only amp.initialize calls (no optimizers), in a run "
        "that reaches no amp.scale_loss, dropped: the loss scale it restored is read by nothing",
        "APX247": "the forward passes run in the batch processor the launcher hands the framework's runner "
        "(mmcv's Runner(model, batch_processor, optimizer)): its body runs under torch.autocast, switched on "
        "where that runner serves the hook that scales the loss (by the GradScaler's state), off elsewhere",
        "APX260": "a function of another file that scales the loss is bound as a method of an object the launcher "
        "builds (tl.override_backward(fn)): the launcher puts the GradScaler on that object, the function scales "
        "through it, and the object's class, in a file without apex.amp, steps, unscales and runs its forward "
        "passes under autocast through it while it is set",
        "APX254": "the runner whose __init__ initialized apex keeps the GradScaler (self.scaler, disabled where "
        "apex was not set up); hooks of other files that scale the loss the runner's step stored scale and step "
        "through it (self.trainer.scaler), and that step, in a file without apex.amp, runs its forward pass under "
        "torch.autocast while the runner carries an enabled GradScaler",
        "APX257": "a subclass in a file without apex.amp overrides the base's method that steps the optimizer "
        "apex scaled for: its step goes through the GradScaler the base keeps on self too (scaler.step, then "
        "update(), with unscale_ before the gradient reads that come before it), as apex patched every "
        "optimizer.step",
        "APX252": "the GradScaler is a module-level variable (None until set) of the one module that initializes "
        "apex, assigned where amp.initialize was; the files whose sites no call chain from there reaches import "
        "that module and read it through it when they run, as apex's loss scalers were per process",
        "APX253": "a method computes the scaled loss from the network outputs its callers hand it, every one of "
        "them a method of its class in the same file: autocast wraps what each caller computes before it hands "
        "them over and the loss computation before the backward, as apex's O1 ran both with its casts",
        "APX250": "the GradScaler is a module-level variable (None until set): the one function that "
        "initializes apex assigns it where amp.initialize was, and the functions no call chain from there "
        "reaches read it when they run, as apex's loss scaler was per process",
        "APX248": "an instance of a class of another file built before amp.initialize (it makes the optimizer the "
        "initialize receives): the GradScaler goes on it where it is created (fitter.scaler = scaler), and the "
        "class's methods that used amp read it on self",
        "APX258": "the object whose method initializes apex keeps the optimizers the losses of other files are "
        "scaled through (self.optimizer.G): it keeps the GradScaler too (self.scaler, created disabled in its "
        "__init__ and replaced where amp.initialize was), and those sites read it there (self.optimizer.scaler)",
        "APX259": "the class whose __init__ initializes apex derives from a base class of another file whose "
        "methods save or load amp's state on self: it keeps the GradScaler on self where it is created "
        "(self.scaler = scaler), and the base's methods read it there",
        "APX226": "the forward passes run inside the framework, under its autocast decorator (mmcv's "
        "@auto_fp16 with fp16_enabled set), not under a torch.autocast the tool placed: check the version "
        "the finding names",
    }
    KNOWN = {LIBRARY_CHECKPOINT_TODO: ("APX216", "warning", True), UNBOUND_TODO: ("APX234", "warning", False)}
    TRIGGERS = (b"apex",)
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = ("apex",)
    NAMESPACES = APEX_AMP

    def plan(self, module: cst.Module) -> None:
        for use, message in unbound_amp_uses(self, module):
            self.todo(use, "APX234", message, severity="warning")
        info = analyse(self, module)
        if not info.uses_amp:
            return
        if info.blockers:
            self.file_state()[LEFT_ON_SHIM] = True
            for blocker in info.blockers:
                self.todo(
                    blocker.node,
                    "APX220",
                    f"{blocker.message}; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand",
                )
            return
        self.info = info
        remove_version_prints(self, info.version_prints)
        reads = info.plan is not None and info.plan.module_reader and not info.training_inits
        if reads and (info.scale_losses or info.needs):
            self._read_module_scaler(info)
        self.switches: Dict[InitSite, Optional[str]] = {}
        self.guards = {site: self._guards_of(site, info) for site in info.inits}
        if info.module_scaler and info.plan is not None and info.plan.module_readers:
            for site in info.training_inits:
                if site.anchor is not site.stmt and leaves_after(self.parents, site.stmt, site.anchor):
                    # the reader route's home: ``if mode == "gan": <initialize> ... return``, where
                    # code after the if would not run; the GradScaler goes where amp.initialize
                    # was, the other paths leave the variable None (apex not set up there)
                    site.anchor, self.guards[site] = site.stmt, []
        if info.alternatives:
            for site in info.training_inits:
                self.guards[site] = []  # inside its branch, the tests that chose it hold
        if info.scaler_in_branch:
            for site in info.training_inits:
                self.guards[site], site.anchor = [], site.stmt  # created in the guard's branch
        self._fold_checks(info)
        self._settled: set = set()
        for need in info.needs:
            if inference_load(self, need, info):
                self._drop_inference_load(need, info)
        for site in info.inits:
            if site in info.absorbed:
                self._absorb_init(site, info)
            else:
                self._rewrite_init(site, info)
        if info.alternatives:
            self._scaler_on_other_paths(info)
        if info.fallback is not None:
            self._scaler_in_init(info)
        if info.run_once is not None:
            self._scaler_before_the_flag(info)
        if info.plan is not None and info.plan.held_readers:
            held_scaler_in_init(self, info)
        else:
            self._scaler_in_init_first(info)
        self._scaler_updates(info)
        for func, calls in info.threaded.items():
            self._thread(func, calls, info, remote=func in info.entry_functions)
        for cls, calls in info.class_threaded.items():
            if cls in info.new_inits:
                self._holder_init(cls, info)
                continue
            self._thread_class(cls, calls, info, remote=info.plan is not None and cls.name.value in info.plan.entries)
        for call, keyword in info.passes.items():
            self._pass_scaler(call, keyword, info)
        for stmt, runner in info.carriers.items():
            self._carry_scaler(stmt, runner, info)
        self._autocast_processors(module, info)
        for need in info.needs:
            if need.kind == "amp_value":
                self._scaler_for_amp(need.node, info, module)
            elif need.kind == "amp_param":
                self._scaler_for_parameter(need.node, info, module)
            elif need.kind in ("amp_param_on", "amp_param_off"):
                switch = f"{info.access[need.func]}.is_enabled()"
                self.replace_node(need.node, expression(switch if need.kind == "amp_param_on" else f"not {switch}"))
        self._flags_for_amp(info)
        self._report_given_by_launchers(info)
        self._return_scaler(info)
        self._unpack_received(info)
        for need in info.needs:
            if need.kind == "loss_call":
                self._place_autocast_at_call(need.node, need.func, info)
        heirs = set(info.plan.heir_methods) if info.plan is not None else set()
        for scaled in info.scale_losses:
            owner = class_of_method(self.parents, scaled.func)
            if owner is not None and (owner.name.value, scaled.func.name.value) in heirs:  # type: ignore[union-attr]
                self.report(
                    scaled.with_stmt,
                    "APX239",
                    f"{info.access.get(scaled.func, info.scaler_name)} is inherited: {owner.name.value} derives from "
                    f"the class whose amp.initialize became it ({info.plan.heir_from})",
                    fixed=True,
                    severity="info",
                )
            self._place_autocast(scaled, info)
            callee = scaled.call.func
            if isinstance(callee, cst.Attribute) and code_of(callee.value) in self._handles(info):
                self._retarget_old_api(scaled, info)

    def _flags_for_amp(self, info: AmpFile) -> None:
        """apex.amp (or None) handed to a helper that initializes it and otherwise only tests
        it (``_amp_flag_param``): the argument becomes the caller's test that bound it (APX286)."""
        record_flags(self, info.flag_helpers)
        for node, flag in info.flag_args.items():
            self.replace_node(node, expression(flag))
            self.report(
                node,
                "APX286",
                f"apex.amp (or None) was handed over only to be tested and initialized where it is set: {flag} "
                "is handed instead, and the GradScaler is created where amp.initialize was",
                fixed=True,
                severity="info",
            )

    def _carry_scaler(self, stmt: cst.SimpleStatementLine, runner: str, info: AmpFile) -> None:
        """``runner = build_runner(...)``: the runner the framework hands its hooks carries the
        GradScaler, as it carries the optimizer (APX225); the framework's decorator puts the
        forward passes under autocast (APX226)."""
        access = info.access.get(enclosing(self.parents, stmt, cst.FunctionDef), info.scaler_name)
        attach = f"{runner}.{CARRIER_ATTRIBUTE} = {access}\n"
        self.edits.insert_after(stmt, [statement(attach)])
        if stmt in info.object_carriers:
            self.report(
                stmt,
                "APX225",
                f"the object built here carries the GradScaler to the methods of its class that scale: "
                f"{attach.strip()}",
                fixed=True,
                severity="info",
            )
            return
        self.report(
            stmt,
            "APX225",
            f"the runner carries the GradScaler to the framework's hooks and its own methods: {attach.strip()}",
            fixed=True,
            severity="info",
        )
        if info.plan is not None and info.plan.framework_autocast:
            for site in info.training_inits:
                self.report(site.call, "APX226", info.plan.framework_autocast, fixed=True, severity="warning")

    def _handles(self, info: AmpFile) -> set:
        return {s.handle for s in info.inits if s.handle}

    def _retarget_old_api(self, site: ScaleLossSite, info: AmpFile) -> None:
        """``handle.scale_loss(...)`` -> ``amp.scale_loss(...)`` (same alias as ``amp.init``),
        so the scale_loss and step rules treat it like any other site."""
        init = next(s for s in info.inits if s.old_api)
        amp_expr = code_of(init.call.func.value) if isinstance(init.call.func, cst.Attribute) else None
        if amp_expr is None:
            return
        self.replace_node(site.call.func, expression(f"{amp_expr}.scale_loss"))

    # --- initialize -------------------------------------------------------------------------

    def _guards_of(self, site: InitSite, info: AmpFile) -> List[Tuple[cst.BaseExpression, bool]]:
        """The conditions under which the initialize runs, as ``(test, negated)``, outermost
        first, and ``site.anchor`` moved to the outermost ``if`` that holds it: in the body of
        ``if c:`` it runs when ``c``; in the ``else:`` of ``if c:`` (``if not args.fp16: ...
        else: amp.initialize(...)``) or after an ``elif``, when the earlier tests fail.  The
        scaler is created after that ``if`` with these conditions as its switch, so it exists
        on every path.  An ``else`` of an apex availability check (``if amp is None:``) stops
        the climb: that ``if`` folds away on its own."""
        parents = self.parents
        guards: List[Tuple[cst.BaseExpression, bool]] = []
        anchor: Any = site.stmt
        cur: Any = site.stmt
        while True:
            block = parents.get(cur)
            owner = parents.get(block) if block is not None else None
            loop, _ = setup_loop(parents, block, site.call)
            if loop is not None:  # a loop that only initializes: one scaler after it
                anchor = cur = loop
                continue
            if is_main_guard(parents, owner):
                break  # the script itself: the scaler is created inside it
            if info.module_scaler and availability_try(owner, block):
                anchor = cur = owner  # its module-level GradScaler is set on every path (APX250)
                continue
            if exiting_try(owner, block) or initialize_only_try(owner, block):
                anchor = cur = owner  # past the try the initialize ran: the scaler goes after it
                continue
            if owner is not None and owner is site.setup_if:
                break  # a loop's setup pass: the scaler is created in its body (``_amp_setup_pass``)
            if isinstance(owner, cst.If) and owner.body is block:
                top, taken, earlier = owner, [(owner.test, False)], []
            elif isinstance(owner, cst.Else) and isinstance(parents.get(owner), cst.If):
                top, taken, earlier = parents[owner], [], [parents[owner].test]
            else:
                break
            # the tests of the earlier branches of an if/elif chain failed
            while isinstance(parents.get(top), cst.If) and parents[top].orelse is top:
                top = parents[top]
                earlier.insert(0, top.test)
            if not taken and any(sub in info.checks for test in earlier for sub in walk(test)):
                break
            guards[:0] = [(test, True) for test in earlier] + taken
            anchor = cur = top
        site.anchor = anchor
        return guards

    def _switch_parts(self, site: InitSite) -> Optional[List[Tuple[str, bool]]]:
        """The conditions that turn amp on, as ``(text, needs parentheses in an and)``;
        None when amp is off."""
        table = OLD_INIT_PARAMS if site.old_api else INIT_PARAMS
        parts: List[Tuple[str, bool]] = []
        for guard, negated in self.guards[site]:
            value, node = fold(guard, self.info.checks)
            if value is not None and negated:
                value = not value
            if value is False:
                return None
            if value is None and negated:
                parts.append(_negated(node))
            elif value is None:
                parts.append((code_of(node), _paren(code_of(node), node) != code_of(node)))
        enabled = _param(site.call, "enabled", table)
        if enabled is not None:
            text = code_of(enabled)
            if text == "False":
                return None
            if text != "True" and not any(same_expression(text, known) for known, _ in parts):
                parts.append((text, _paren(text, enabled) != text))
        if site.options is not None:
            # a mapping's options are read where they are needed (see _options_lines)
            options = self.info.option_locals[0]
            parts.append((f'bool({options}.get("enabled", True))', False))
            parts.append((f'{options}.get("opt_level", "O1") != "O0"', False))
        elif not site.old_api:
            level = _param(site.call, "opt_level", table)
            literal = string_value(level)
            if level is None or literal in ("O1", "O2", "O3"):
                pass
            elif literal == "O0":
                return None
            else:
                cond = f'{_paren(code_of(level), level)} != "O0"'
                if not any(same_expression(cond, text) for text, _ in parts):
                    parts.append((cond, False))
        return parts

    def _switch_name(self, site: InitSite, parts: List[Tuple[str, bool]], new: List[cst.BaseStatement]) -> str:
        """The switch of ``parts`` (not empty): a lone name that is provably a bool as it is,
        else the file's switch variable, whose assignment is appended to ``new``."""
        scope = scope_at(self.parents, site.stmt)
        joined = _joined(parts)
        value = as_bool(joined, scope)
        if len(parts) == 1 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", joined) and value == joined:
            return joined
        new.append(statement(f"{self.info.switch_name} = {value}\n"))
        return self.info.switch_name

    def _drop_inference_load(self, need: Any, info: AmpFile) -> None:
        """``amp.load_state_dict(x)`` beside inference initializes only, in a run that scales
        no loss (``_amp_sites.inference_load``): the statement goes (with an ``if`` holding
        only it); the checkpoint's other entries load as before."""
        stmt = self.statement_of(need.node)
        self.edits.replace(guard_left_empty(self.parents, stmt) or stmt, [])
        self.report(
            need.node,
            "APX280",
            "amp.load_state_dict(...) dropped: the amp.initialize of this file is for inference (no optimizers) "
            f"and {unscaled_why(info)}, so the loss scale it restored is read by nothing (the checkpoint's entry "
            "is ignored)",
            fixed=True,
            severity="warning",
        )

    def _rewrite_init(self, site: InitSite, info: AmpFile) -> None:
        call = site.call
        table = OLD_INIT_PARAMS if site.old_api else INIT_PARAMS
        level_node = None if site.old_api else _param(call, "opt_level", table)
        level = "O1" if level_node is None else string_value(level_node)
        if site.options is not None:
            level, level_node = None, site.options
        parts = self._switch_parts(site)

        new: List[cst.BaseStatement] = []
        if not site.old_api:
            kept = self._kept_assignment(site)
            if kept is not None:
                new.append(kept)
        if site.inference:
            self._inference(site, "O1", [])
            return
        if not site.has_optimizers and not site.old_api:
            self._inference(site, level, new)
            return
        if site.unscaled:
            self._unscaled(site, level, level_node, new)
            route = info.carrier
            if route is not None and all(member == "initialize" for _use, member in route.uses):
                self.edits.replace(route.store, [])  # ``self.amp_lib = amp``: nothing reads it now
            return
        variable = self._launcher_autocast(site, info)
        if variable is not None:
            binding = self._bind_autocast(site, variable)
            self._kept = getattr(self, "_kept", set()) | {binding}
            if info.library_wrappers:
                self._library_wrappers(info)
                self._place(site, new + [binding])
                return
            new.append(binding)

        if site.options is not None:
            new.extend(self._options_lines(site, info, parts))
            parts = parts[-2:] if parts is not None else None  # the guards are in the options now
        switch: Optional[str]
        if parts is None:
            switch = "False"
        elif not parts:
            switch = None
        else:
            switch = self._switch_name(site, parts, new)
        self.switches[site] = switch
        target = self._scaler_target(site, info)
        # the step rule asks whether a plain backward's branch runs only with it off
        made = self.file_state().setdefault(SCALER_SWITCHES, [])
        if info.alternatives or info.fallback is not None or info.scaler_in_branch:
            made.append("several")  # each made in its branch: the guards above it are no switch
        else:
            texts = None if parts is None else [
                [text] + attribute_aliases(self.parents, site.func, text) for text, _ in parts
            ]
            local = bound_names(site.func)
            free = frozenset(
                t for t, _ in parts or [] if t.isidentifier() and t not in local and site.func is not None
            )
            made.append((target, switch, texts, scope_key(self.parents, site.func), free))
        if info.alternatives or info.fallback is not None or info.scaler_in_branch:
            # several creations: autocast follows whichever ran
            self.switches[site] = f"{info.loss_scaler(target, 0)}.is_enabled()"

        self.scaler_todos: List[str] = []
        self.scale_lines: List[str] = []
        self.dynamic_start: Optional[str] = DYNAMIC_START
        self.backoff: Optional[str] = None
        kwargs = self._scaler_options(site, table, level, level_node, parts or [])
        new.extend(statement(line) for line in self.scale_lines)
        if switch is not None:
            kwargs.append(f"enabled={switch}")
        for need in self._settings_after(site, info):
            self._settled.add(need)
            if need.kind == "scaler_alias":
                if not _read_through(need, info):
                    self.edits.replace(need.node, [])
                continue
            self.edits.replace(need.node, [])
            assign = need.node.body[0]
            attr = assign.targets[0].target.attr.value
            if attr in AMP_STATE_DROPPED:
                self._drop_setting(need.node, attr)
                continue
            option = AMP_STATE_SETTINGS[attr]
            kwargs = [k for k in kwargs if not k.startswith(option + "=")]
            kwargs.insert(len(kwargs) - (switch is not None), f"{option}={code_of(assign.value)}")
            self.report(
                need.node,
                "APX208",
                f"amp._amp_state loss-scaler setting became GradScaler({option}=...)",
                fixed=True,
                severity="info",
            )
        ctor = self._scaler_ctor(site, kwargs)
        made = f"{ctor}({', '.join(kwargs)})"
        if info.loss_scalers > 1 and site.options is not None and info.plan is not None and info.plan.losses_at_run_time:
            # apex's num_losses from the options dict, as apex read it (default 1)
            made = f'[{made} for _ in range({info.option_locals[0]}.get("num_losses", 1))]'
        elif info.loss_scalers > 1:  # apex's num_losses: one GradScaler per loss id
            made = f"[{made} for _ in range({info.loss_scalers})]"
        created = statement(f"{target} = {made}\n")
        self.file_state()["scaler"] = info.scaler_name
        self.file_state()["loss_scalers"] = info.loss_scalers
        new.append(with_leading(created, [line for t in self.scaler_todos for line in todo_lines(t)]))
        if self.backoff is not None and info.carrier is None:
            # (where apex.amp is kept on an attribute, the later rules read the statements after
            # the GradScaler's: argus-freesound's scale_loss through self.amp stayed on the shim)
            new.append(statement(static_backoff_line(target, self.backoff, info.loss_scalers > 1)))
        for instance, attribute in self._attached(site, info):
            if info.plan is not None and info.plan.held_readers:
                new.extend(held_attach(self, call, target, instance, attribute, info))
                continue
            kept = [b for c, a, b in info.plan.kept_for_bases if instance == "self" and a == attribute]
            if kept:
                if target != f"{instance}.{attribute}":
                    new.append(statement(f"{instance}.{attribute} = {target}\n"))
                self.report(
                    call,
                    "APX259",
                    f"self.{attribute} keeps the GradScaler where it is created: the methods of {kept[0]} that "
                    "save or load amp's state read it there (nothing this __init__ runs calls them)",
                    fixed=True,
                    severity="info",
                )
                continue
            new.append(statement(f"{instance}.{attribute} = {target}\n"))
            self.report(
                call,
                "APX248",
                f"{instance} was built before amp.initialize: {instance}.{attribute} holds the GradScaler, "
                "which its methods read on self",
                fixed=True,
                severity="info",
            )
        route = info.carrier
        if route is not None and site.func is route.launcher and (route.access or route.lent):
            new.append(statement(f"{route.carrier}.{route.new_attribute} = {target}\n"))
            # the later rules find the GradScaler there; the scale_loss rule drops the store
            self.file_state()["carrier_functions"] = {
                carrier_key(self.parents, f): a for f, a in route.access.items()
            }
            if not route.uses:
                self.edits.replace(route.store, [])  # no scale_loss rule runs on this file
            readers = ", ".join([f"{carrier_key(self.parents, f)}()" for f in route.access] + route.lent)
            self.report(
                route.store,
                "APX237",
                f"apex.amp kept on {route.carrier}.{route.attribute}: {route.carrier}.{route.new_attribute} "
                f"holds the GradScaler instead, read by {readers}",
                fixed=True,
                severity="info",
            )
        if route is not None and route.carrier == "self" and site.func is route.launcher:
            # (the scale_loss rule drops the store once it has rewritten the reads)
            self.report(
                route.store,
                "APX237",
                f"apex.amp kept on self.{route.attribute}: the methods of this class read it only to scale, "
                f"so {target} holds the GradScaler instead",
                fixed=True,
                severity="info",
            )
        if info.module_scaler:
            self._module_variable(site, info)
        elif info.plan is not None and info.plan.module_home:
            AddImportsVisitor.add_needed_import(self.context, info.plan.module_home)
            self.report(
                call,
                "APX250",
                f"the GradScaler is {target}, the module-level variable of the module whose code scales the losses: "
                "this initialize assigns it, as apex's replaced the process's loss scaler",
                fixed=True,
                severity="info",
            )
        what = "amp.init()" if site.old_api else "amp.initialize"
        self.report(
            call,
            "APX211" if site.old_api else "APX201",
            f"{what} rewritten: {target} = {ctor}(...) and torch.autocast around the forward pass"
            if not info.carriers
            else f"{what} rewritten: {target} = {ctor}(...), which the object built carries (APX225)"
            if info.object_carriers
            else f"{what} rewritten: {target} = {ctor}(...), which the framework's runner carries (APX225)",
            fixed=True,
            severity="info",
        )
        self._place(site, new)

    def _read_module_scaler(self, info: AmpFile) -> None:
        """A reader of the module-scaler route: it imports the home module by its dotted
        name (never ``from home import``, which would copy None) and its sites read the
        variable through it (APX252)."""
        dotted = info.plan.module_reader
        line = info.plan.reader_import
        where = ""
        if info.plan.reader_local:
            # the initializing module imports this one: each reading function imports it when
            # it runs, where the import cycle cannot break
            for func in dict.fromkeys(f for f in info.access if isinstance(f, cst.FunctionDef)):
                self.edits.insert_before(first_body_statement(func), [statement(line)], above_comments=True)
            where = " (imported in the functions that read it: the initializing module imports this file)"
        elif info.plan.reader_bound:
            package, _, name = dotted.rpartition(".")
            AddImportsVisitor.add_needed_import(self.context, package, name)
        else:
            AddImportsVisitor.add_needed_import(self.context, dotted)
        first = info.scale_losses[0].with_stmt if info.scale_losses else info.needs[0].node
        self.report(
            first,
            "APX252",
            f"the GradScaler is {dotted}.{info.scaler_name}, the module-level variable the initializing module "
            f"assigns where amp.initialize was: the sites of this file read it through that module when they run"
            f"{where}, as apex's loss scalers were per process",
            fixed=True,
            severity="info",
        )

    def _module_variable(self, site: InitSite, info: AmpFile) -> None:
        """The module-scaler route: ``<scaler> = None`` (with its comment) before the first
        top-level definition, ``global <scaler>`` first in the initializing function."""
        name = info.scaler_name
        first = first_body_statement(site.func)
        definition = first_definition(self.tree)
        assert first is not None and definition is not None
        self.edits.insert_before(first, [statement(f"global {name}\n")])
        comment = cst.EmptyLine(comment=cst.Comment(COMMENT))

        def variable_first(upd: Any) -> List[Any]:
            created = statement(f"{name} = None\n").with_changes(leading_lines=[*upd.leading_lines, comment])
            return [created, upd]

        previous = self.edits.replacements.get(definition)
        if previous is None:
            self.edits.replace(definition, variable_first)
        else:  # the definition is already edited (the initializing function itself)
            self.edits.replace(
                definition,
                lambda upd: [*variable_first(upd)[:1], *(previous(upd) if callable(previous) else previous)],
            )
        readers = sorted({f.name.value + "()" for f, a in info.access.items() if f is not site.func and a == name
                          and f is not None})
        if info.plan is not None and info.plan.module_readers:
            self.report(
                site.call,
                "APX252",
                f"the GradScaler is the module-level variable {name}, assigned here where amp.initialize was (apex's "
                f"loss scalers were per process): the sites of {', '.join(info.plan.module_readers)} read it through "
                "this module when they run",
                fixed=True,
                severity="info",
            )
            return
        self.report(
            site.call,
            "APX250",
            f"the GradScaler is the module-level variable {name}, assigned here where amp.initialize was "
            f"(apex's loss scaler was per process); {', '.join(readers)} read it when they run, which no call "
            "chain from here could hand it",
            fixed=True,
            severity="info",
        )

    def _attached(self, site: InitSite, info: AmpFile) -> List[Tuple[str, str]]:
        """The plan's attach route: (instance, attribute) pairs for the GradScaler this
        initialize creates, in the definition the plan names."""
        if info.plan is None or not info.plan.attach_scaler:
            return []
        top = site.func
        while top is not None and enclosing_function(self.parents, top) is not None:
            top = enclosing_function(self.parents, top)
        cls = class_of_method(self.parents, top) if top is not None else None
        names = {n.name.value for n in (top, cls) if n is not None}
        return [(i, a) for d, i, a in info.plan.attach_scaler if d in names]

    def _absorb_init(self, site: InitSite, info: AmpFile) -> None:
        """A later initialize in sequence with the first, with the same options: apex replaced
        its loss scalers there, and the GradScaler the first one creates serves every
        optimizer as the last one's did (APX245); only its assignment, if any, stays."""
        kept = self._kept_assignment(site)
        new = [kept] if kept is not None else []
        if not new:
            self._todos_to_next(site.stmt, site.stmt)
        self.edits.replace(site.stmt, lambda upd: self._carry(upd, new))
        if site.raised:
            first = info.training_inits[0]
            self.report(
                site.call,
                "APX246",
                f"amp.initialize again on what {first.func.name.value}() already passed through amp.initialize: "
                f"apex raised RuntimeError here ('{site.raised}'), so this path never trained under apex; "
                f"it now goes on with the GradScaler ({info.scaler_name}) created there",
                fixed=True,
                severity="warning",
            )
            return
        self.report(
            site.call,
            "APX245",
            f"amp.initialize again with the same options: apex replaced its loss scaler here, so the one "
            f"GradScaler ({info.scaler_name}) created for the first initialize scales the losses of every optimizer",
            fixed=True,
            severity="info",
        )

    def _scaler_updates(self, info: AmpFile) -> None:
        """Loss-scaler settings not folded into the constructor (in another method, in another
        file's class the scaler is passed to: DLE-GNMT's AMPOptimizer) update the GradScaler
        where they stand, through its public API: ``_loss_scale = x`` ->
        ``scaler.load_state_dict({**scaler.state_dict(), "scale": x})`` (the current scale, and
        the initial one before the first step, as apex's assignment did; the clean-step count
        is kept), ``_scale_seq_len = n`` -> ``scaler.set_growth_interval(n)``."""
        for need in info.needs:
            if need.kind == "ignored_setting":
                self.edits.replace(need.node, [])
                self.report(
                    need.node,
                    "APX222",
                    "amp._amp_state loss-scaler setting _scale_seq_len dropped: apex ignores it, "
                    "the loss scale is static",
                    fixed=True,
                    severity="info",
                )
            if need.kind not in ("scaler_setting", "scaler_alias") or need in self._settled:
                continue
            if need.kind == "scaler_alias":
                if not _read_through(need, info):
                    self.edits.replace(need.node, [])  # else it goes with the reads (CastingHooksRule)
                continue
            scaler = info.access.get(need.func)
            if scaler is None:
                continue  # unreachable: the analysis made every need's function reach the scaler
            scaler = info.loss_scaler(scaler, need.loss_id)
            assign = need.node.body[0]
            attr = assign.targets[0].target.attr.value
            if attr in AMP_STATE_DROPPED:
                self.edits.replace(need.node, [])
                self._drop_setting(need.node, attr)
                continue
            value = code_of(assign.value)
            if attr == "_scale_seq_len":
                new = f"{scaler}.set_growth_interval({value})\n"
            else:
                new = f'{scaler}.load_state_dict({{**{scaler}.state_dict(), "{AMP_STATE_KEYS[attr]}": {value}}})\n'
            self.edits.replace(need.node, lambda upd, new=new: [move_leading(upd, statement(new))])
            self.report(
                need.node,
                "APX208",
                f"amp._amp_state loss-scaler setting {attr} -> {new.strip()}",
                fixed=True,
                severity="info",
            )

    def _drop_setting(self, node: Any, attr: str) -> None:
        self.report(
            node,
            "APX222",
            f"amp._amp_state loss-scaler setting {attr} dropped: {AMP_STATE_DROPPED[attr]}",
            fixed=True,
            severity="warning",
        )

    def _settings_after(self, site: InitSite, info: AmpFile) -> List[Any]:
        """The loss-scaler settings of the initialize's function (with their aliases) that
        go into the GradScaler's constructor: all of them or none.  Each must run whenever the
        initialize does (in its block or in the block of the ``if`` around it), after it, with
        no loss scaled in between and no name of its value assigned in between (the value is
        evaluated where the scaler is created).  The others become state updates of the
        scaler (CastingHooksRule)."""
        mine = [n for n in info.needs if n.kind in ("scaler_setting", "scaler_alias") and n.func is site.func]
        if not mine or site.func is None or info.alternatives or info.loss_scalers > 1:
            return []  # one GradScaler per loss id: each setting updates its loss id's
        start = self.line_of(site.stmt)
        blocks = {self.parents.get(site.stmt), self.parents.get(site.anchor)}
        for need in mine:
            line = self.line_of(need.node)
            if line < start or self.parents.get(need.node) not in blocks:
                return []
            if any(start < self.line_of(s.with_stmt) < line for s in info.scale_losses if s.func is site.func):
                return []
            # a read of the scale before the setting saw apex's first scale, not the one set
            if any(n.kind == "get_scale" and n.func is site.func and self.line_of(n.node) < line for n in info.needs):
                return []
            if need.kind == "scaler_alias":
                continue
            value_names = names_in(need.node.body[0].value)
            for stmt in walk(site.func):
                if (
                    isinstance(stmt, cst.SimpleStatementLine)
                    and stmt is not need.node
                    and start < self.line_of(stmt) < line
                    and {n.split(".")[0] for n in assigned_names(stmt)} & value_names
                ):
                    return []
        return mine

    def _options_lines(
        self, site: InitSite, info: AmpFile, parts: Optional[List[Tuple[str, bool]]]
    ) -> List[cst.BaseStatement]:
        """``amp.initialize(model, optimizer, **cfg)``: the options are read from ``cfg`` at
        run time, as apex read them: ``amp_options = dict(cfg)`` under the tests that chose the
        initialize (``parts`` but its last two, the options' own), else ``{"enabled": False}``
        (there ``cfg`` may be None), and, unless bfloat16 autocast needs no scaling, its
        ``loss_scale`` (apex's default "dynamic")."""
        off = '{"enabled": False}'
        guards = parts[:-2] if parts is not None else []
        value = f"dict({code_of(site.options)})" if parts is not None else off
        if guards:
            joined = " and ".join(f"({text})" if paren else text for text, paren in guards)
            value = f"{value} if {joined} else {off}"
        options, loss_scale, scale, growth = info.option_locals
        lines = [statement(f"{options} = {value}\n")]
        if self.settings.dtype != "bfloat16":
            lines.append(statement(f'{loss_scale} = {options}.get("loss_scale", "dynamic")\n'))
            lines.append(
                statement(
                    # apex's dynamic scale started at min(max_loss_scale, 2**16)
                    f"{scale}, {growth} = (\n"
                    f'    (min({DYNAMIC_START}, {options}.get("max_loss_scale", 2.0**24)), 2000)\n'
                    f'    if {loss_scale} == "dynamic"\n'
                    f"    else (float({loss_scale}), {NO_GROWTH})\n"
                    ")\n"
                )
            )
        return lines

    @staticmethod
    def _scaler_target(site: InitSite, info: AmpFile) -> str:
        """``scaler``, or ``self.scaler`` when it lives on the instance."""
        if info.storage == "self" and site.func is not None:
            return f"{site.func.params.params[0].name.value}.{info.scaler_name}"
        if info.plan is not None and info.plan.module_home:
            return f"{info.plan.module_home}.{info.scaler_name}"  # the home module's variable (APX250)
        return info.scaler_name

    def _scaler_ctor(self, site: InitSite, kwargs: List[str]) -> str:
        """The GradScaler class for the target torch; its device argument goes first in
        ``kwargs`` (torch >= 2.3)."""
        self.need_torch()
        if self.settings.torch_at_least(2, 3):
            enabled = next((k[len("enabled="):] for k in kwargs if k.startswith("enabled=")), "")
            kwargs.insert(0, switched_device(device_type_at(self, site.anchor, map(code_of, site.models)), enabled))
            return "torch.amp.GradScaler"
        return "torch.cuda.amp.GradScaler"

    def _scaler_on_other_paths(self, info: AmpFile) -> None:
        """Alternative initializes each create the scaler in their branch; when some path
        through the if/else runs none of them (``if fp16: if dynamic: ... else: ...`` with
        no fp16), a disabled scaler is created before it, as apex ran such a path in fp32."""
        sites = info.training_inits
        anchor = sites[0].anchor
        if _binds_on_every_path([anchor], {s.stmt for s in sites}):
            return
        kwargs = ["enabled=False"]
        ctor = self._scaler_ctor(sites[0], kwargs)
        target = self._scaler_target(sites[0], info)
        made = _per_loss_id(f"{ctor}({', '.join(kwargs)})", info)
        self.edits.insert_before(anchor, [statement(f"{target} = {made}\n")])

    def _scaler_in_init(self, info: AmpFile) -> None:
        """The initialize's method runs only when ``__init__``'s ``if`` holds: ``__init__``
        creates a disabled scaler before that ``if``, which the method replaces, so every
        method finds one and the fp32 path trains as before (APX221)."""
        assert info.fallback is not None
        self._disabled_scaler_before(
            info.fallback, info, "APX221", "replaced in {method}(), which runs only under this if"
        )

    def _scaler_before_the_flag(self, info: AmpFile) -> None:
        """The initialize is under a run-once guard: its branch creates the enabled scaler;
        ``__init__`` creates a disabled one just before it first sets the guard's flag, so
        every method finds one and the fp32 path trains as before (APX238)."""
        assert info.run_once is not None
        flag = stale_flag(self.parents, info.training_inits[0])
        replaced = f"replaced in {{method}}() the first time its run-once guard on {flag} passes"
        self._disabled_scaler_before(info.run_once, info, "APX238", replaced)

    def _scaler_in_init_first(self, info: AmpFile) -> None:
        """The scaler lives on ``self`` and a method other than ``__init__`` creates it: an
        instance whose first call is another method (``evaluate()`` on a fresh trainer) finds
        the disabled one ``__init__`` creates first, and runs in fp32 as apex did before its
        initialize (APX261)."""
        sites = info.training_inits
        if (
            info.storage != "self"
            or not sites
            or any(s.func is None or s.func.name.value == "__init__" for s in sites)
            or info.fallback is not None
            or info.run_once is not None
            or info.scaler_in_branch
            or info.carrier is not None
            or info.module_scaler
            or info.returned_to
        ):
            return
        cls = class_of_method(self.parents, sites[0].func)
        creators = {s.func.name.value for s in sites}  # type: ignore[union-attr]
        place = init_scaler_place(self, cls, creators) if cls is not None else None
        if place is None:
            return
        for site in sites:
            if self.switches.get(site) is None:
                # an always-on autocast would run the methods called first in float16 where apex
                # ran them in fp32: it follows the scaler, as for the other disabled-first routes
                self.switches[site] = f"{info.loss_scaler(self._scaler_target(site, info), 0)}.is_enabled()"
        names = "(), ".join(sorted(creators))
        self._disabled_scaler_before(
            place[0], info, "APX261", f"replaced in {names}() where amp.initialize was, for the instances "
            "whose methods run before it", after=place[1]
        )

    def _disabled_scaler_before(
        self, anchor: Any, info: AmpFile, code: str, replaced: str, after: bool = False
    ) -> None:
        """``self.<scaler> = GradScaler(enabled=False)`` before (``after``: after) ``anchor``, a
        statement of ``__init__``, reported under ``code`` with how the initializing method
        replaces it."""
        site = info.training_inits[0]
        init = enclosing_function(self.parents, anchor)
        # a disabled scaler never touches a device: the default ("cuda") is right anywhere
        self.need_torch()
        ctor = "torch.amp.GradScaler" if self.settings.torch_at_least(2, 3) else "torch.cuda.amp.GradScaler"
        target = f"{self_name(init)}.{info.scaler_name}"
        made = [statement(f"{target} = {_per_loss_id(f'{ctor}(enabled=False)', info)}\n")]
        if after:
            self.edits.insert_after(anchor, made)
        else:
            self.edits.insert_before(anchor, made)
        method = site.func.name.value if site.func is not None else ""
        message = f"{target} is created disabled here and " + replaced.format(method=method)
        self.report(anchor, code, message, fixed=True, severity="info")

    def _place(self, site: InitSite, new: List[cst.BaseStatement]) -> None:
        """Put ``new`` where the initialize statement was; when it sat in an ``if``, the
        scaler goes after that ``if`` so it exists on both paths.  A TODO written at the
        initialize stays in the file: on the first statement that replaces it, else on a
        ``pass`` left in its place.  Alternative initializes create theirs in their branch."""
        hoisted = site.hoist_before is not None
        if not hoisted and (site.anchor is site.stmt or self.info.alternatives and site in self.info.training_inits):
            if not new:
                self._todos_to_next(site.stmt, site.stmt)
            self.edits.replace(site.stmt, lambda upd: self._carry(upd, new))
            return
        kept = [s for s in new if self._is_kept_assignment(s)]
        created = [s for s in new if not self._is_kept_assignment(s)]
        if not kept and not created:
            self._todos_to_next(site.stmt, site.anchor)
        self.edits.replace(site.stmt, lambda upd: self._carry(upd, kept))
        if hoisted:  # handed to calls before the initialize: created before the first
            self.edits.insert_before(site.hoist_before, created)
            created = []
            if site.anchor is site.stmt:
                return
        if site.scaler_first:  # used inside the if too: created before it
            self.edits.insert_before(site.anchor, created)
            created = []

        for inner in self._chains_inside(site.stmt, site.anchor):
            # ``if native: ... elif use_apex: <initialize>`` inside the anchor keeps no ``elif: pass``
            if not self.edits.planned(inner) and inner not in self.edits.groups:
                self.edits.replace(inner, self._pruned_inner_if)

        def after_if(upd: Any) -> List[cst.BaseStatement]:
            upd = _prune_empty_elifs(upd)
            if is_empty_shell(upd) and not _holds_our_todo(upd.body):
                # the comment lines below the block (LibCST gives them to it) stay where they were
                self.edits.lead_next(_footer_outside(upd, self.tree.default_indent))
                return [move_leading(upd, created[0])] + created[1:] if created else []
            return [upd] + created

        self.edits.replace(site.anchor, after_if)

    def _pruned_inner_if(self, upd: Any) -> List[Any]:
        """An ``if`` between the initialize and the statement its GradScaler follows, with its
        empty ``elif``/``else`` pruned (``_prune_quiet_elifs``); gone where nothing is left of it
        but ``pass`` (DeepGNN: ``if self.args.fp16 == FP16_APEX: <initialize>`` inside ``if
        self.optimizer:``), no comment is in it and its test only reads values (``pure_test``):
        a test that calls something is still evaluated, so that ``if`` stays.  The comment
        block right above it goes with it where it names apex (``kept_leading``); any other
        comment above it keeps the ``if`` (it may say what the test is about)."""
        upd = _prune_quiet_elifs(upd)
        if not is_empty_shell(upd) or "#" in code_of(upd.body) or not pure_test(upd.test):
            return [upd]
        if any(line.comment is not None for line in kept_leading(upd.leading_lines)):
            return [upd]
        return []

    def _chains_inside(self, stmt: Any, anchor: Any) -> List[cst.If]:
        """The ``if`` statements (heads of their elif chains) holding ``stmt`` below ``anchor``."""
        found: List[cst.If] = []
        node = self.parents.get(stmt)
        while node is not None and node is not anchor:
            parent = self.parents.get(node)
            if isinstance(node, cst.If) and not (isinstance(parent, cst.If) and parent.orelse is node):
                found.append(node)
            node = parent
        return found if node is anchor else []

    def _library_wrappers(self, info: AmpFile) -> None:
        """``ApexScaler()`` of an installed library -> its native twin (``NativeScaler()``),
        which holds its own GradScaler: the initialize goes without one."""
        for call in info.library_wrappers:
            qualified = next(iter(self.qualified_names(call.func) & set(LIBRARY_WRAPPERS)))
            module, old = qualified.rsplit(".", 1)
            new = LIBRARY_WRAPPERS[qualified]
            if isinstance(call.func, cst.Name):
                AddImportsVisitor.add_needed_import(self.context, module, new)
                RemoveImportsVisitor.remove_unused_import(self.context, module, old)
                self.replace_node(call.func, cst.Name(new))
            else:
                self.replace_node(call.func, call.func.with_changes(attr=cst.Name(new)))
            self.todo(
                call, "APX216", library_checkpoint_todo(code_of(call.func), new), severity="warning", fixed=True
            )

    def _todos_to_next(self, stmt: Any, anchor: Any) -> None:
        """The TODOs on ``stmt``, which goes without a replacement, move to the statement
        after ``anchor`` when this rule leaves that one as it is."""
        block = self.parents.get(anchor)
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        index = body.index(anchor) if anchor in body else -1
        if stmt not in self.todos or index < 0 or index + 1 >= len(body):
            return
        carrier = body[index + 1]
        if self.edits.planned(carrier) or carrier in self.edits.groups or carrier in self.node_replacements:
            return
        self.todos.setdefault(carrier, []).extend(self.todos.pop(stmt))

    def _carry(self, upd: Any, new: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
        """``new`` in place of the statement ``upd``, with its comments (and the TODOs this
        rule put on it); an end-of-line comment goes to the end of the first new line."""
        if new:
            comment = trailing_comment(upd)
            first = with_trailing_comments(new[0], [comment] if comment is not None else [])
            return [move_leading(upd, first)] + new[1:]
        if read_todos(upd.leading_lines):
            return [move_leading(upd, statement("pass\n"))]
        return []

    _kept: set

    def _is_kept_assignment(self, stmt: cst.BaseStatement) -> bool:
        return stmt in getattr(self, "_kept", set())

    def _kept_assignment(self, site: InitSite) -> Optional[cst.BaseStatement]:
        """``a, b = amp.initialize(m, o)`` -> ``a, b = m, o`` unless that is a no-op."""
        holder = site.stmt.body[0]
        if not isinstance(holder, cst.Assign):
            return None
        target = holder.targets[0].target
        models = arg_value(site.call, 0, "models")
        # an empty optimizers list (inference) is still part of what was unpacked
        opts = arg_value(site.call, 1, "optimizers")
        if isinstance(opts, cst.Name) and proven_none(self.parents, site.call, opts.value):
            opts = None  # under ``if optimizer is None:`` apex returns the models alone
        value_parts = [models] + ([opts] if opts is not None and code_of(opts) != "None" else [])
        if isinstance(target, cst.Name) and target.value == "_":
            return None
        target_texts = flat_texts(target)
        value_texts = [t for v in value_parts for t in flat_texts(v)]
        if target_texts == value_texts:
            return None
        if (
            isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == len(value_parts)
            and all(isinstance(e.value, (cst.Name, cst.Attribute)) for e in target.elements)
            and not any(isinstance(v, (cst.Tuple, cst.List)) for v in value_parts)
        ):
            # ``model, optimizer = model.cuda(), optimizer`` -> ``model = model.cuda()``
            pairs = [(e.value, v) for e, v in zip(target.elements, value_parts) if code_of(e.value) != code_of(v)]
            targets, values = ", ".join(code_of(t) for t, _ in pairs), ", ".join(code_of(v) for _, v in pairs)
            stmt = statement(f"{targets} = {values}\n")
            self._kept = getattr(self, "_kept", set()) | {stmt}
            return stmt
        value = ", ".join(code_of(v) for v in value_parts)
        if isinstance(target, cst.Name) and len(value_parts) == 2 and self._may_be_none(site, opts):
            # apex returns the models alone when the optimizers are None at run time
            value = f"{code_of(models)} if {code_of(opts)} is None else ({value})"
        stmt = statement(f"{code_of(target)} = {value}\n")
        self._kept = getattr(self, "_kept", set()) | {stmt}
        return stmt

    def _may_be_none(self, site: InitSite, opts: Any) -> bool:
        """Whether the optimizers ``opts`` (a name) are set to None in the initialize's
        function (``optimizer = None``, ``optimizer, scheduler = None, None``, a parameter
        defaulting to None)."""
        if not isinstance(opts, (cst.Name, cst.Attribute)):
            return False
        text = code_of(opts)
        scope: Any = site.func if site.func is not None else self.tree
        if site.func is not None:
            params = site.func.params
            for param in list(params.params) + list(params.kwonly_params):
                if param.name.value == text and param.default is not None and code_of(param.default) == "None":
                    return True
        for node in walk(scope):
            if not isinstance(node, cst.Assign):
                continue
            for target in node.targets:
                pairs: List[Tuple[Any, Any]] = [(target.target, node.value)]
                if isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, (cst.Tuple, cst.List)):
                    pairs = list(zip([e.value for e in target.target.elements], [e.value for e in node.value.elements]))
                if any(code_of(t) == text and code_of(v) == "None" for t, v in pairs):
                    return True
        return False

    def _scaler_options(self, site: InitSite, table, level, level_node, guards=()) -> List[str]:
        call = site.call
        kwargs: List[str] = []
        if site.options is not None:
            return self._mapping_scaler_options(site)
        loss_scale = _param(call, "loss_scale", table)
        cap = _param(call, "max_loss_scale", table) if "max_loss_scale" in table else None
        self.dynamic_start = self._dynamic_start(site, cap, guards)
        if loss_scale is not None and self.settings.dtype == "bfloat16":
            self.report(
                loss_scale,
                "APX203",
                f"loss_scale={code_of(loss_scale)} dropped: bfloat16 autocast needs no loss scaling",
                fixed=True,
                severity="info",
            )
        elif loss_scale is not None and string_value(loss_scale) != "dynamic":
            number = _literal_number(loss_scale)
            run_time = None if number is not None else self._run_time_scale(site, loss_scale, level, guards, level_node)
            if run_time is not None:
                kwargs += run_time
            elif number is None:
                message = (
                    f"loss_scale={code_of(loss_scale)} is chosen at run time; the GradScaler is dynamic. "
                    f"If it is a number, pass init_scale=<it>, growth_interval={NO_GROWTH} to the GradScaler"
                )
                self.report(loss_scale, "APX205", message)
                self.scaler_todos.append(message)
            else:
                text = (
                    code_of(loss_scale)
                    if _literal_number(loss_scale) is not None and not isinstance(loss_scale, cst.SimpleString)
                    else repr(number)
                )
                kwargs += [f"init_scale={text}", f"growth_interval={NO_GROWTH}"]
                self.backoff = STATIC_BACKOFF
                message = (
                    f"static loss_scale={code_of(loss_scale)}: the GradScaler keeps this scale, "
                    f"but unlike apex it {SKIPS_ON_OVERFLOW}; check that this is acceptable"
                )
                self.report(loss_scale, "APX204", message, severity="warning", fixed=True)
                self.scaler_todos.append(message)
        if site.old_api:
            return kwargs
        if level in ("O2", "O3"):
            self.report(
                level_node,
                "APX202",
                f"{level}: the model stays fp32 (no fp16 weights, no master weights); "
                f"{self.settings.dtype} autocast gives the mixed precision",
                fixed=True,
                severity="warning",
            )
        elif level is None:
            self.report(
                level_node,
                "APX202",
                f"opt level {code_of(level_node)} is chosen at run time: O1, O2 and O3 all become "
                f"{self.settings.dtype} autocast with fp32 weights, O0 turns amp off",
                fixed=True,
                severity="warning",
            )
        for name in (
            "cast_model_type",
            "patch_torch_functions",
            "keep_batchnorm_fp32",
            "master_weights",
            "cast_model_outputs",
            "min_loss_scale",
            "max_loss_scale",
        ):
            value = _param(call, name, table)
            if value is not None:
                why = {
                    "min_loss_scale": "GradScaler has no floor for the scale",
                    "max_loss_scale": "GradScaler has no ceiling for the scale",
                }.get(name, "weights stay fp32 under autocast")
                if name == "max_loss_scale":
                    why = self._cap_dropped(value, loss_scale, kwargs)
                self.report(value, "APX203", f"{name}={code_of(value)} dropped: {why}", fixed=True, severity="warning")
        num_losses = _param(call, "num_losses", table)
        if num_losses is not None and self.info.loss_scalers > 1:
            self.report(
                num_losses,
                "APX203",
                f"num_losses={code_of(num_losses)}: one GradScaler per loss id, as apex kept one loss scaler per "
                "loss (each optimizer is stepped after the losses of one loss id)",
                fixed=True,
                severity="info",
            )
        elif num_losses is not None:
            self.report(
                num_losses,
                "APX203",
                "num_losses dropped: one GradScaler serves every loss",
                fixed=True,
                severity="info",
            )
        verbosity = _param(call, "verbosity", table)
        if verbosity is not None:
            self.report(
                verbosity,
                "APX203",
                "verbosity dropped: native AMP prints neither the option listing nor the overflow lines",
                fixed=True,
                severity="info",
            )
        return kwargs

    def _dynamic_start(self, site: InitSite, cap: Optional[cst.BaseExpression], guards) -> Optional[str]:
        """Where apex's dynamic scaler started: ``min(max_loss_scale, 2**16)`` (spec 6.1), as
        a GradScaler ``init_scale`` text; None where a run-time cap may not be read where the
        GradScaler is made (``run_time_cap_start``)."""
        if cap is None:
            return DYNAMIC_START
        number = _literal_number(cap)
        if number is not None:
            return code_of(cap) if number < APEX_INIT_SCALE else DYNAMIC_START
        in_place = site.anchor is site.stmt or bool(self.info.alternatives) and site in self.info.training_inits
        return run_time_cap_start(self.parents, site, cap, guards, in_place)

    def _cap_dropped(self, cap: cst.BaseExpression, loss_scale: Any, kwargs: List[str]) -> str:
        """Why ``max_loss_scale`` is dropped, after putting apex's start into ``kwargs`` where
        the scale is a literal dynamic one (a run-time scale put it in its own lines)."""
        start = self.dynamic_start
        if self.settings.dtype == "bfloat16":
            return "bfloat16 autocast needs no loss scaling"
        dynamic = loss_scale is None or string_value(loss_scale) == "dynamic"
        if not dynamic and _literal_number(loss_scale) is not None:
            return "the loss scale is static, and apex's static scaler did not apply it either"
        if start is None or not dynamic and not self.scale_lines:
            return (
                "apex's dynamic scale started at min(2**16, it) and never grew past it; the GradScaler starts at "
                "2**16 (the cap or the scale may change before it is made) and has no ceiling"
            )
        if dynamic and start != DYNAMIC_START:
            kwargs.append(f"init_scale={start}")
        number = _literal_number(cap)
        shown = "2**16" if start == DYNAMIC_START else code_of(cap) if number is not None else f"min(2**16, {code_of(cap)})"
        return f"the dynamic GradScaler starts at {shown} as apex's did, but has no ceiling: it may grow past it"

    def _run_time_scale(self, site: InitSite, loss_scale: Any, level, guards, level_node=None) -> Optional[List[str]]:
        """The GradScaler options read from a run-time ``loss_scale`` (see
        ``_run_time_loss_scale``); the lines that compute them go before it.  None: APX205."""
        _, value_name, scale, growth = self.info.option_locals
        in_place = site.anchor is site.stmt or bool(self.info.alternatives) and site in self.info.training_inits
        names = (value_name, scale, growth)
        found = run_time_scale_lines(
            self.parents, site, loss_scale, level, guards, names, in_place, level_node, self.dynamic_start or DYNAMIC_START
        )
        if found is None:
            return None
        lines, kwargs = found
        self.scale_lines.extend(lines)
        self.backoff = run_time_backoff(growth)
        self.report(
            loss_scale,
            "APX204",
            f"loss_scale={code_of(loss_scale)} is read at run time, as apex read it: \"dynamic\" (or None under O1/O2) "
            "keeps the dynamic GradScaler, a number makes it static (it starts there and never changes), but unlike "
            f"apex it {SKIPS_ON_OVERFLOW}; check that this is acceptable",
            fixed=True,
            severity="warning",
        )
        return kwargs

    def _mapping_scaler_options(self, site: InitSite) -> List[str]:
        """The GradScaler options of ``amp.initialize(model, optimizer, **cfg)``: dynamic
        (from 2**16, growing every 2000 clean steps, as apex's) unless ``cfg["loss_scale"]`` is
        a number: then it starts there and never grows.  The opt level is read at run time."""
        options = site.options
        assert options is not None
        mapping = code_of(options)
        self.report(
            options,
            "APX202",
            f"opt level and options come from {mapping} at run time: O1, O2 and O3 all become "
            f"{self.settings.dtype} autocast with fp32 weights, O0 or enabled=False turns amp off; "
            "cast_model_type, keep_batchnorm_fp32, master_weights, min_loss_scale in it are ignored; its "
            "max_loss_scale sets where a dynamic GradScaler starts, as apex's, but it may grow past it (no ceiling)",
            fixed=True,
            severity="warning",
        )
        if self.settings.dtype == "bfloat16":
            return []
        _, _, scale, growth = self.info.option_locals
        self.backoff = run_time_backoff(growth)
        self.report(
            options,
            "APX204",
            f'a numeric {mapping}["loss_scale"] is static: the GradScaler keeps it, but unlike apex it '
            f"{SKIPS_ON_OVERFLOW}; check that this is acceptable",
            fixed=True,
            severity="warning",
        )
        return [f"init_scale={scale}", f"growth_interval={growth}"]

    def _unscaled(
        self, site: InitSite, level: Optional[str], level_node: Any, new: List[cst.BaseStatement]
    ) -> None:
        """No loss of the repository is scaled: apex trained unscaled, casting the forward
        passes (O1).  Each model's ``forward`` is wrapped in ``torch.autocast`` where the
        initialize stood (inside its ``if``), switched by the opt level; no GradScaler."""
        site.anchor = site.stmt
        self.guards[site] = []  # the wrap stays inside the ifs that chose the initialize
        parts = self._switch_parts(site)
        if parts is None:  # O0 or enabled=False: apex changed nothing
            self._place(site, new)
            return
        switch = as_bool(_joined(parts), scope_at(self.parents, site.stmt)) if parts else ""
        enabled = f", enabled={switch}" if switch else ""
        texts = [code_of(m) for m in site.models]
        device = device_type_at(self, site.stmt, texts)
        autocast = f"torch.autocast({device}, dtype=torch.{self.settings.dtype}{enabled})"
        wraps = [statement(f"{t}.forward = {autocast}({t}.forward)\n") for t in texts]
        self._kept = getattr(self, "_kept", set()) | set(new) | set(wraps)
        AddImportsVisitor.add_needed_import(self.context, "torch")
        message = (
            f"{site.unscaled_why or 'no file of the repository calls amp.scale_loss'}: apex never scaled a loss "
            "here, so no GradScaler is "
            f"created; {', '.join(texts)} now run{'s' if len(texts) == 1 else ''} forward under torch.autocast. "
            "Losses computed outside that forward see its float16 outputs (apex O1 ran loss functions in float32): "
            "compute them under the same autocast or from .float() outputs"
        )
        if site.unscaled_fails:  # no loss reaches a backward: only the forward passes before it run
            message = (
                f"{site.unscaled_why}: no GradScaler is created; {', '.join(texts)} now "
                f"run{'s' if len(texts) == 1 else ''} forward under torch.autocast, as apex cast it up to that line"
            )
        elif level in ("O2", "O3") or level is None:
            message += (
                f"; {'a run-time' if level is None else level} opt level: the weights stay fp32 under autocast"
                + (
                    " (apex O2 without amp.scale_loss never updated them: its fp32 master weights get gradients "
                    "only inside scale_loss; the migrated model trains)"
                    if level in ("O2", None) and not site.stepless
                    else ""
                )
            )
        self.report(site.call, "APX229", message, fixed=True, severity="warning")
        for name in INIT_PARAMS:
            value = _param(site.call, name, INIT_PARAMS)
            if name not in ("enabled", "opt_level") and value is not None:
                why = "no loss is scaled and the weights stay fp32 under autocast"
                self.report(value, "APX203", f"{name}={code_of(value)} dropped: {why}", fixed=True, severity="info")
        self._place(site, new + wraps)

    def _inference(self, site: InitSite, level: Optional[str], new: List[cst.BaseStatement]) -> None:
        """No optimizers: O3 -> ``model.half()``; O1/O2 -> autocast by hand; O0 -> nothing.
        No scaler is created, so what replaces the initialize (and its TODO) stays where it
        stood, inside its ``if``, instead of after the outermost ``if`` around it; O1/O2
        followed in the function put its later uses of the model under autocast instead
        (``_autocast_uses``)."""
        if autocast_levels(site, level) and self._autocast_uses(site, new):
            return
        site.anchor = site.stmt
        models = site.models
        holder = site.stmt.body[0]
        if level == "O3":
            if isinstance(holder, cst.Assign) and not new:
                new = [statement(f"{code_of(m)}.half()\n") for m in models]
            elif isinstance(holder, cst.Assign) and len(models) == 1:
                # ``model = amp.initialize(model, opt_level="O3")``, ``net, _ = amp.initialize(net, [])``
                value = f"{code_of(arg_value(site.call, 0, 'models'))}.half()"
                opts = arg_value(site.call, 1, "optimizers")
                if isinstance(holder.targets[0].target, (cst.Tuple, cst.List)) and opts is not None:
                    value += f", {code_of(opts)}"
                new = [statement(f"{code_of(holder.targets[0].target)} = {value}\n")]
            elif isinstance(holder, cst.Assign):
                new = new + [statement(f"{code_of(m)}.half()\n") for m in models]
            else:
                new = [statement(f"{code_of(m)}.half()\n") for m in models]
            # they stand where the initialize stood (inside its ``if``), not after it
            self._kept = getattr(self, "_kept", set()) | set(new)
            self.todo(
                site.call,
                "APX206",
                "O3 inference: the model is now float16; apex also cast its floating inputs to float16 and its outputs "
                "back to float32 - cast the inputs with .half() and the outputs with .float() where they are used",
                severity="warning",
                fixed=True,
            )
        elif level != "O0":
            # manual work: apex ran this model's forward in mixed precision, the migrated
            # script would run it in float32 (the TODO stays in the file, see _place)
            self.todo(
                site.call,
                "APX206",
                "inference without optimizers: wrap the forward pass in "
                f'`with torch.autocast("cuda", dtype=torch.{self.settings.dtype}):` for mixed precision',
            )
        self._place(site, new)

    def _autocast_uses(self, site: InitSite, new: List[cst.BaseStatement]) -> bool:
        """O1/O2 inference whose function goes on to use the model: each statement using it
        after the initialize's ``if`` runs under ``torch.autocast``, switched as apex was
        (``_amp_inference``); False (nothing done) where that cannot be followed."""
        found = inference_uses(self, site, self.info)
        if found is None:
            return False
        uses, in_block, contexts = found
        variable = next(iter(contexts)) if len(contexts) == 1 else None
        if len(contexts) > 1 or variable is not None and not self._bindable_context(site, variable):
            return False
        guards = self.guards[site]
        if in_block:
            self.guards[site] = []  # they hold in the initialize's own block
        parts = self._switch_parts(site)
        self.guards[site] = guards
        if parts is None or any(re.search(r"""['"]apex\b""", text) for text, _ in parts):
            return False  # a switch asking whether apex is installed (find_spec("apex")) would now say no
        new = list(new)
        done = []
        if variable is not None:
            binding = self._bind_autocast(site, variable, report=False)
            self._kept = getattr(self, "_kept", set()) | {binding}
            new.append(binding)
            done.append(
                f"{variable}, a no-op context on this branch, is bound to torch.autocast: the forward passes under "
                f"`with {variable}():` run in {self.settings.dtype}"
            )
        if in_block:
            site.anchor = site.stmt
        texts = sorted(model_names(site) or ())
        if uses:
            switch = self._switch_name(site, parts, new) if parts else None
            device = device_type_at(self, site.stmt, texts)
            enabled = f", enabled={switch}" if switch else ""
            head = f"with torch.autocast({device}, dtype=torch.{self.settings.dtype}{enabled}):\n    pass\n"
            indent = self.tree.default_indent
            for members in consecutive_runs(self.parents, uses):
                self.edits.wrap(members, lambda ups, head=head: wrapped_in_with(head, ups, indent))
            done.append(
                f"the {len(uses)} {'other ' if variable else ''}statement{'s' if len(uses) != 1 else ''} using "
                f"{', '.join(texts)} after it run{'' if len(uses) != 1 else 's'} under torch.autocast"
            )
        self.need_torch()
        self.report(
            site.call,
            "APX206",
            f"inference without optimizers: {'; '.join(done)}: apex ran the model in mixed precision from the "
            "initialize on, wherever it was called; a forward pass run from elsewhere now runs in float32",
            severity="warning",
            fixed=True,
        )
        self._place(site, new)
        return True

    def _bindable_context(self, site: InitSite, variable: str) -> bool:
        """Whether the context ``variable`` that the model's later forward passes run under can
        be bound to torch.autocast where the initialize stood: bound to a no-op before it
        (``inference_context_variable``) and amp on wherever the initialize runs (no
        ``enabled=`` switch, no run-time opt level: the binding has no switch of its own)."""
        guards = self.guards[site]
        self.guards[site] = []
        own = self._switch_parts(site)
        self.guards[site] = guards
        return own == [] and inference_context_variable(self, site, variable)


InitializeRule.EXAMPLES = EXAMPLES + REPOSITORY_EXAMPLES + INPUT_GRADIENT_REFUSALS + PLAIN_STEP_CALLERS
InitializeRule.NOOP_EXAMPLES = NOOP_EXAMPLES


def _read_through(alias: Any, info: AmpFile) -> bool:
    """Whether the scale is read through the loss scaler ``alias`` binds: the statement stays
    for the rule that rewrites those reads, which removes it with them."""
    return any(n.kind == "get_scale" and n.via is alias.node for n in info.needs)


def _per_loss_id(made: str, info: AmpFile) -> str:
    """A disabled GradScaler created on the paths no initialize runs, as a list of one per
    loss id where the initializes make one per loss id (``scalers[1]`` is read on every path:
    HR-VITON's num_losses=2 under ``if opt.fp16:``)."""
    return f"[{made} for _ in range({info.loss_scalers})]" if info.loss_scalers > 1 else made
