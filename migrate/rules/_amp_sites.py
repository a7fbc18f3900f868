"""Where a file uses apex.amp, and how a GradScaler can reach each use.

Shared by every apex.amp rule.  ``find_amp_refs`` resolves names through the file's imports
(never by text); ``analyse`` groups the references into initialize sites, ``scale_loss``
sites and other sites that need the scaler, decides where the scaler lives (a local, a
``self.`` attribute, a module global) and how it reaches every function that needs it
(same function, closure, method of the same class, or a new parameter of a same-file
function whose every caller can pass it).  Whatever cannot be proven is a *blocker*: the
file then keeps apex.amp's behaviour through ``apexcompat.amp`` and the blocker is reported.

``find_steps`` finds the optimizer steps a scale_loss feeds: in its function, in the other
methods of its class, or in the same-file callers of its function (``caller_links``).

``find_scalers`` is what the later rules use once the scaler exists: it finds the
``GradScaler`` the initialize rule created (or one the user already had) from any node.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union, cast

import libcst as cst

from ..family_names import SCALER_NAMES, SCALERS_NAMES, SWITCH_NAMES, free_name
from ..repo_index import MODULE_LEVEL
from ..repo_plan import NOT_PROVEN, SCALED_ELSEWHERE
from ..runner_frameworks import CARRIER_ATTRIBUTE
from ._amp_reinit import APEX_REFUSAL, raised_reinitializes
from ._amp_rule import LEFT_ON_SHIM
from ._clip_functions import CLIP_FUNCTIONS
from ._exit_unscale import exit_unscale_count
from ._input_gradient import input_gradient, input_gradient_refusal
from ._o2_model_clip import o2_model_clips
from ._amp_holder import held_instance, local_binding, local_instance
from ._amp_hoist import hoist_target
from ._amp_partial import bound_calls, bound_offset, lone_assignment, partial_calls
from ._amp_flag_param import STATE_KEY as FLAG_STATE_KEY, flag_args, flag_members
from ._per_tree import remembered
from ._amp_param import (
    amp_parameters,
    initializing_refusals,
    outside_refusals,
    parameters_given_amp,
    planned_parameters,
    planned_refusals,
)
from ._amp_caller_steps import ROUTE, LauncherStep, helper_shape, launcher_step, stepped_helper
from ._amp_carrier import CarrierRoute, carrier_key, carrier_route, initialized_before, is_reference
from ._amp_setup_loop import option_args, option_values, setup_loop
from ._amp_setup_pass import setup_pass, setup_pass_refusal
from ._amp_wrapper import wrapper_holder
from ._amp_held import through_held
from ._amp_handed_wrapper import steppable_holder
from ._amp_method_step_gap import method_step_gap
from ._amp_none_optimizer import proven_none
from ._amp_module_scaler import initialize_only_try, module_route, module_variable, reader_home
from ._amp_mirrored_step import NOT_IN_ELSE, chain_tests, mirrored_guard, scale_clause
from ._amp_shared_step import follows_each_backward, gradient_uses, shared_guard
from ._amp_narrowed_step import SWITCH_KEY, narrower, switch_conditions
from ._plain_step_callers import plain_step_path
from ._plain_alternative import attribute_aliases
from ._amp_guarded_step import scale_guard
from ._amp_probe_gate import probe_gate
from ._amp_sibling_step import sibling_steps
from ._amp_stepless import stepless_optimizers, stepless_why
from ._amp_unbound import unbound_amp_uses
from ._amp_version import VERSION_MEMBER, version_print
from ._binding import param_names
from ._early_returns import early_return_ok
from ._edits import code_of, same_expression
from ._torch_version import old_torch_branch
from ._namespace_gate import statements_naming
from ._tree import enclosing_function, holds_only, inside, module_code, names_spelled, node_classes, walk, walk_of

AMP = "apex.amp"
GRADSCALER_NAMES = frozenset(
    {
        "torch.amp.GradScaler",
        "torch.GradScaler",
        "torch.cuda.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
    }
)
#: apex.amp members the rules know how to rewrite natively
HANDLED_MEMBERS = frozenset(
    {
        "initialize",
        "init",
        "scale_loss",
        "state_dict",
        "load_state_dict",
        "master_params",
        "disable_casts",
        "register_half_function",
        "register_float_function",
        "register_promote_function",
        "half_function",
        "float_function",
        "promote_function",
        "_amp_state",
    }
)
#: the locals an ``**options`` initialize reads its mapping into: the mapping, its
#: loss_scale, and the GradScaler's init_scale and growth_interval from that
OPTION_LOCALS = (("amp_options", "amp_loss_scale", "amp_scale", "amp_growth"), ("amp_init_options",
                 "amp_init_loss_scale", "amp_init_scale", "amp_init_growth"))
AMP_STATE_SCALE_READ = "loss_scale"  # amp._amp_state.loss_scalers[0].loss_scale()
#: apex LossScaler attributes a script sets (``amp._amp_state.loss_scalers[0]._loss_scale = x``)
#: -> the GradScaler constructor argument, and the key of its state_dict, that hold the same
AMP_STATE_SETTINGS = {"_loss_scale": "init_scale", "_scale_seq_len": "growth_interval"}
AMP_STATE_KEYS = {"_loss_scale": "scale", "_scale_seq_len": "growth_interval"}
#: settings GradScaler has no counterpart for -> why (they are dropped with a warning, APX222)
AMP_STATE_DROPPED = {
    "_max_loss_scale": "GradScaler has no ceiling for the scale (apex capped it there)",
    "_min_loss_scale": "GradScaler has no floor for the scale (apex kept it from going lower)",
}

#: callables whose name says they are the model (the forward pass), not a loss or data
MODEL_CALL = re.compile(r"(model|net|encoder|decoder|generator|discriminator)", re.IGNORECASE)


@dataclass(eq=False, repr=False)
class AmpRef:
    """One use of apex.amp: ``expr`` denotes ``apex.amp.<member>`` (``member`` is ``""``
    when the module object itself is used as a value)."""

    expr: cst.BaseExpression
    member: str


@dataclass(eq=False, repr=False)
class InitSite:
    call: cst.Call
    stmt: cst.SimpleStatementLine
    #: the statement the scaler is created after: the outermost ``if`` whose body holds the
    #: call (``if args.fp16: model, opt = amp.initialize(...)``), else ``stmt``
    anchor: cst.BaseStatement
    guards: List[cst.BaseExpression]
    func: Optional[cst.FunctionDef]
    old_api: bool = False
    handle: Optional[str] = None
    models: List[cst.BaseExpression] = field(default_factory=list)
    optimizers: List[cst.BaseExpression] = field(default_factory=list)
    has_optimizers: bool = False
    #: an old-API ``amp.init()`` whose handle scales no loss: O1 casting for inference only
    inference: bool = False
    #: the scaler is created before ``anchor`` (the ``if``), not after it: used inside it
    scaler_first: bool = False
    #: the statement of ``anchor``'s block the scaler is created before: calls there are
    #: handed it before the initialize runs (``_amp_hoist``)
    hoist_before: Optional[cst.BaseStatement] = None
    #: ``cfg`` of ``amp.initialize(model, optimizer, **cfg)``: the options come from a
    #: mapping at run time (opt level, enabled, loss_scale are read from it there)
    options: Optional[cst.BaseExpression] = None
    #: a training initialize no ``scale_loss`` of the repository follows (apex trained
    #: unscaled): its models' forward passes get autocast, no GradScaler is created
    unscaled: bool = False
    #: why, when not because no file of the repository scales a loss
    unscaled_why: str = ""
    #: with ``unscaled``: the ``amp.scale_loss`` its losses reach raises NameError (APX234),
    #: in the original too, so the run fails there rather than training unscaled
    unscaled_fails: bool = False
    #: with ``unscaled``: its optimizers are never stepped (``_amp_stepless``), so its
    #: models train in neither run
    stepless: bool = False
    #: the initialize sits under a run-once guard (``if not self.amp_ready: ...;
    #: self.amp_ready = True``): why a scaler after the guard's ``if`` would be wrong.  The
    #: route of ``_amp_run_once`` creates it in the branch instead (``AmpFile.run_once``)
    stale_guard: Optional[str] = None
    #: the ``if`` of a loop's setup pass (``if epoch == args.start:``) whose body creates the
    #: optimizer and initializes (``_amp_setup_pass``): the GradScaler is created in that
    #: body, its switch the tests below it
    setup_if: Optional[cst.If] = None
    #: with ``setup_if``: the refusal (``stale_guard``) that route stands in for, said when
    #: the scaler's uses are not all proven to read the optimizer (``setup_pass_refusal``)
    setup_why: str = ""
    #: apex raised at this initialize: it passes again what ``__init__``'s initialize passed
    #: (``_amp_reinit``); absorbed into that one, with this said
    raised: str = ""


@dataclass(eq=False, repr=False)
class ScaleLossSite:
    with_stmt: cst.With
    call: cst.Call
    func: Optional[cst.FunctionDef]
    loss: cst.BaseExpression
    optimizers: List[cst.BaseExpression]
    as_name: Optional[str]
    #: which of the GradScalers scales this loss (``loss_id``, with one per loss id)
    loss_id: int = 0
    #: ``loss_id`` a parameter of the helper holding the site, given a number by each of its
    #: calls (``backwards(loss, opt, loss_id=1)``): call -> that loss id, whose GradScaler the
    #: call hands the helper (which then scales with the one it is given)
    call_loss_ids: Dict[cst.Call, int] = field(default_factory=dict)
    #: optimizers stepped through a proven wrapper holding them (``_amp_wrapper``): the
    #: wrapper's expression (now in ``optimizers``) -> (the optimizer scale_loss named, the
    #: wrapper class)
    wrapped: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    #: optimizers stepped through a wrapper whose step is handed the GradScaler
    #: (``_amp_handed_wrapper``): the optimizer scale_loss named -> (the wrapper's
    #: expression, the wrapper class's local name, the path of its file, its class name)
    handed: Dict[str, Tuple[str, str, str, str]] = field(default_factory=dict)
    #: optimizers stepped through the object the held-optimizer route proved holds them, whose
    #: ``step()`` only steps them (``held_optimizer_plan``): the optimizer -> that object
    delegated: Dict[str, str] = field(default_factory=dict)
    #: the reader route's steps in a sibling function (``_amp_sibling_step``), each -> the
    #: ``else`` its new clause goes before and that clause's test
    sibling: Dict[cst.Call, Tuple[Any, Any]] = field(default_factory=dict)
    #: why no sibling steps ("" when none was looked for or they were found)
    sibling_why: str = ""
    #: the functions calling the one that holds those steps' scaled backward
    sibling_callers: List[Any] = field(default_factory=list)
    #: ``scaler.unscale_(optimizer)`` follows the scaled backward, where apex unscaled
    exit_unscale: bool = False
    #: the backward runs plain, after an earlier block's ``unscale_`` (``_amp_after_backward``)
    plain_backward: bool = False


@dataclass(eq=False, repr=False)
class Need:
    """A site other than ``scale_loss`` that needs the scaler (checkpoints, clipping, the
    private loss-scale idioms)."""

    node: Any
    kind: str
    func: Any
    #: for a read of apex's loss scale (``get_scale``): the loss id of the scaler it reads
    loss_id: int = 0
    #: for a read through a local (``s = amp._amp_state.loss_scalers[0]; s.loss_scale()``):
    #: the statement binding it, which goes once the reads through it are rewritten
    via: Any = None


@dataclass(eq=False, repr=False)
class Blocker:
    node: Any
    message: str


@dataclass(eq=False, repr=False)
class AmpFile:
    refs: List[AmpRef] = field(default_factory=list)
    inits: List[InitSite] = field(default_factory=list)
    scale_losses: List[ScaleLossSite] = field(default_factory=list)
    needs: List[Need] = field(default_factory=list)
    blockers: List[Blocker] = field(default_factory=list)
    #: statements that only print or log apex.amp's version (``_amp_version``): they go
    version_prints: List[Any] = field(default_factory=list)
    #: name given to the scaler (and its switch) in this file
    scaler_name: str = "scaler"
    switch_name: str = "use_amp"
    #: names of the locals of an ``**options`` initialize (see ``OPTION_LOCALS``)
    option_locals: Tuple[str, ...] = OPTION_LOCALS[0]
    #: where the scaler lives: "local" (a local/global name) or "self" (``self.<name>``)
    storage: str = "local"
    #: same-file functions that get the scaler as a new parameter
    threaded: Dict[cst.FunctionDef, List[cst.Call]] = field(default_factory=dict)
    #: same-file classes whose ``__init__`` gets the scaler (kept on ``self``): class -> calls
    class_threaded: Dict[cst.ClassDef, List[cst.Call]] = field(default_factory=dict)
    #: function -> expression that reaches the scaler inside it
    access: Dict[Any, str] = field(default_factory=dict)
    #: availability checks (``amp is None``, ``not amp``, ``if amp:``) -> their value now that
    #: mixed precision is always available
    checks: Dict[cst.CSTNode, bool] = field(default_factory=dict)
    #: the cross-file plan's part for this file (``repo_plan.FilePlan``), if any
    plan: Any = None
    #: functions of this file that take the scaler from another file (the plan's entries)
    entry_functions: Set[cst.FunctionDef] = field(default_factory=set)
    #: functions of this file whose parameter launchers of other files fill with apex.amp
    #: (or None), which carries the GradScaler instead (``amp_value_plan``)
    given_by_launchers: Set[cst.FunctionDef] = field(default_factory=set)
    #: calls of another file's functions/classes that pass the scaler: call -> keyword
    passes: Dict[cst.Call, str] = field(default_factory=dict)
    #: entry classes without an ``__init__`` that get one taking the scaler
    new_inits: Set[cst.ClassDef] = field(default_factory=set)
    #: ``ApexScaler()`` calls of an installed library (timm) beside the initialize, which
    #: become that library's native scaler; then ``autocast_var`` is the launcher's no-op
    #: autocast variable bound to torch.autocast in the initialize's place
    library_wrappers: List[cst.Call] = field(default_factory=list)
    autocast_var: Optional[str] = None
    #: the training initializes are alternatives (branches of one if/elif/else, never
    #: two in one run): each branch creates the scaler with its own options
    alternatives: bool = False
    #: ``model.amp`` of ``model.amp = amp``: apex.amp kept on an object (its uses not followed)
    stored_as: str = ""
    #: where apex.amp is handed on as a value that is not followed (``to criterion() in
    #: train()``, ``in a dict in train()``), in source order
    handed_on: List[str] = field(default_factory=list)
    #: where this file's ``amp.scale_loss`` reads an ``amp`` bound in no scope it can see (APX234)
    unbound_scales: List[str] = field(default_factory=list)
    #: why the carrier route of a launcher that hands its carrier to a step function of
    #: another file is not proven ("": proven, or no such launcher)
    lending_refused: str = ""
    #: the helper that initializes returns the scaler to its caller: its calls there (each
    #: assignment unpacks one more value) and the helper's returns (each returns it last)
    returned_to: List[cst.Call] = field(default_factory=list)
    returns: List[cst.Return] = field(default_factory=list)
    #: the helper's returns before its initialize, on a path without mixed precision: each
    #: gives back a disabled GradScaler (``_early_returns``)
    early_returns: List[cst.Return] = field(default_factory=list)
    #: calls of a threaded function from where no GradScaler exists that provably run none of
    #: its amp sites: they hand it a disabled one (``_amp_dead_calls``)
    disabled_calls: List[cst.Call] = field(default_factory=list)
    #: a model factory (the plan's ``returns_scaler``): its returns give the GradScaler to
    #: its one caller, in this file of the repository (shown)
    returned_elsewhere: str = ""
    #: initializes in sequence in that factory after the first: apex replaced the loss scalers
    #: at each, so the first's GradScaler (same options) serves all; they only go
    absorbed: List[InitSite] = field(default_factory=list)
    #: the plan's ``received``: function -> the assignment that unpacks the GradScaler the
    #: factory of another file returns
    received: Dict[cst.FunctionDef, cst.Assign] = field(default_factory=dict)
    #: why such an assignment was not found (the file's sites report it)
    received_refusal: str = ""
    #: why apex.amp handed to a same-file function that initializes it there keeps the shim
    #: (``_amp_param.initializing_refusals``): then this file's scale_loss sites say so too
    initialized_in_callee: str = ""
    #: apex.amp (or None) handed to a helper that initializes it and only tests it otherwise
    #: (``_amp_flag_param``): argument -> the caller's test that bound it, which replaces it
    flag_args: Dict[cst.CSTNode, str] = field(default_factory=dict)
    #: those helpers' names -> that parameter
    flag_helpers: Dict[str, str] = field(default_factory=dict)
    #: the class whose ``__init__`` is the function receiving it (kept on ``self``)
    received_class: Optional[cst.ClassDef] = None
    #: the caller-step route in a launcher (``_amp_caller_steps``): the step after a call of
    #: another file's backward helper -> that call and what ``launcher_step`` found
    caller_steps: Dict[cst.Call, Tuple[cst.Call, LauncherStep]] = field(default_factory=dict)
    #: methods reading ``amp.master_params`` that other files call too: their gradients are
    #: unscaled before this file's calls of them, not inside (``_helpers_called_elsewhere``)
    unscale_at_callers: Set[Any] = field(default_factory=set)
    #: the initialize is in a method ``__init__`` calls only under an ``if``: the statement of
    #: ``__init__`` before which a disabled scaler is created, so every instance has one
    fallback: Optional[cst.BaseStatement] = None
    #: the initialize is under a run-once guard on a flag of ``self``: the statement of the
    #: class's ``__init__`` that first sets that flag, before which a disabled scaler is
    #: created; the initialize's branch replaces it with an enabled one
    run_once: Optional[cst.BaseStatement] = None
    #: the initialize is under a run-once guard and the scaler is created in its branch (with
    #: ``run_once`` in this file, else in a base class's ``__init__`` in another file)
    scaler_in_branch: bool = False
    #: initializes of this file that cannot be rewritten (their blocker says why): the other
    #: sites are not reported as if the file had no initialize
    refused_inits: int = 0
    #: where this file's amp.scale_loss calls that cannot be rewritten are (``in train()``;
    #: their blocker says why): the initialize is then not told the losses are scaled elsewhere
    refused_scales: List[str] = field(default_factory=list)
    #: GradScalers, one per apex loss id (``num_losses=2``, each optimizer stepped after the
    #: losses of one loss id): then the scaler is their list; 1: one GradScaler serves all
    loss_scalers: int = 1
    #: methods of framework hooks/runners that read the GradScaler from the runner they are
    #: handed (the plan's ``carried``; their ``access`` is ``runner.grad_scaler``)
    carried_functions: Set[cst.FunctionDef] = field(default_factory=set)
    #: in the launcher: the runner builds the GradScaler is put on (statement -> runner name)
    carriers: Dict[cst.SimpleStatementLine, str] = field(default_factory=dict)
    #: those of ``carriers`` that build an object of the repository (``built_route``), not a
    #: framework's runner
    object_carriers: Set[cst.SimpleStatementLine] = field(default_factory=set)
    #: apex.amp kept on a carrier object (``args.amp = amp``) whose route is proven: the
    #: GradScaler goes on the carrier instead
    carrier: Optional[CarrierRoute] = None
    #: optimizer text -> its loss id (with several GradScalers)
    loss_ids: Dict[str, int] = field(default_factory=dict)
    #: the GradScaler is a module-level variable the initializing function assigns
    #: (``_amp_module_scaler``): functions no call chain reaches read it at call time
    module_scaler: bool = False
    #: a reader of the module-level GradScaler that exists only when apex was set up, whose
    #: steps run on plain runs too (``_amp_mirrored_step``): each plain step -> (its ``else``,
    #: the scaled backward's clause test), which an ``elif`` stepping through the GradScaler
    #: goes before
    mirrored_steps: Dict[Any, Tuple[Any, Any]] = field(default_factory=dict)
    #: a reader's steps on a line after the if-chain of the scaled and the plain backward: the
    #: step call -> (its line, the scaling clause's test) (``_amp_shared_step``)
    shared_steps: Dict[Any, Tuple[Any, Any]] = field(default_factory=dict)
    #: a reader's functions without a site that read the home's variable for autocast
    reader_callers: Set[Any] = field(default_factory=set)
    #: the runner-hook route's hook methods (``_amp_guarded_step``): method -> the scale
    #: clause's test, which its steps and unscales take (the runner may carry no GradScaler)
    scaler_guards: Dict[Any, Any] = field(default_factory=dict)
    #: probes of whether apex was initialized that only gate a casting decorator
    #: (``_amp_probe_gate``): (the probe's def, the ifs it is the test of)
    probe_gates: List[Tuple[Any, List[Any]]] = field(default_factory=list)

    def loss_scaler(self, expr: str, loss_id: int) -> str:
        """The GradScaler of ``loss_id`` when there is one per loss id, else ``expr``."""
        return f"{expr}[{loss_id}]" if self.loss_scalers > 1 else expr

    def scaler_of(self, expr: str, optimizer: str) -> str:
        """The GradScaler that steps ``optimizer``."""
        return self.loss_scaler(expr, self.loss_ids.get(optimizer, 0))

    def site_scaler(self, expr: str, site: "ScaleLossSite") -> str:
        """The GradScaler that scales the loss of ``site``: the one its function is handed
        where each call picks the loss id's (``call_loss_ids``)."""
        return expr if site.call_loss_ids else self.loss_scaler(expr, site.loss_id)

    def call_loss_id(self, call: cst.Call) -> Optional[int]:
        """The loss id whose GradScaler ``call`` (of a helper whose loss id is a parameter)
        hands over; None for any other call."""
        return next((s.call_loss_ids[call] for s in self.scale_losses if call in s.call_loss_ids), None)

    @property
    def uses_amp(self) -> bool:
        return bool(self.refs) or bool(self.blockers)

    @property
    def training_inits(self) -> List[InitSite]:
        return [s for s in self.inits if (s.has_optimizers or s.old_api) and not s.inference]


# --- resolving names -------------------------------------------------------------------------


_STATEMENTS = node_classes((cst.BaseStatement,))


def _inside_import(parents: Dict[cst.CSTNode, cst.CSTNode], node: cst.CSTNode) -> bool:
    cur = node
    while cur in parents:
        cur = parents[cur]
        kind = type(cur)
        if kind is cst.Import or kind is cst.ImportFrom:
            return True
        if kind in _STATEMENTS:
            return False
    return False


def find_amp_refs(rule, module: cst.Module, prefix: str = AMP) -> List[AmpRef]:
    """Every expression in ``module`` that denotes ``prefix`` (apex.amp) or one of its
    members, outermost first in source order."""
    parents = rule.parents
    refs: List[AmpRef] = []
    declared = globals_bound_to(parents, module, prefix) if prefix == AMP else set()
    given = parameters_given_amp(rule, module) if prefix == AMP else {}
    flags = flag_members(rule, module) if prefix == AMP else {}  # on/off, their members apex.amp's
    roots = _possible_roots(module, prefix, declared | set(given.values()) | set(flags.values()))
    for node in walk_of(module, cst.Name, cst.Attribute):
        root = _chain_root(node)
        if roots is not None and root is not None and root not in roots:
            continue
        names = rule.qualified_names(node)
        if not names and isinstance(node, cst.Name) and node.value in declared and plain_read(parents, node):
            names = {prefix}  # resolved to the module global the function's import binds
        if given and isinstance(node, cst.Name) and node.value in given.values() and plain_read(parents, node):
            owner = parents.get(node)
            read = owner.attr.value if isinstance(owner, cst.Attribute) and owner.value is node else ""
            if given.get(enclosing_function(parents, node)) == node.value and read != "is_enabled":
                names = {prefix}  # the parameter every call fills with apex.amp (is_enabled: its scaler's)
        if flags and isinstance(node, cst.Name) and flags.get(enclosing_function(parents, node)) == node.value:
            owner = parents.get(node)
            if isinstance(owner, cst.Attribute) and owner.value is node:
                names = {prefix}  # a member of the flag parameter, read only where it is set
        if not names or _inside_import(parents, node):
            continue
        if isinstance(node, cst.Attribute) and any(
            n == prefix or n.startswith(prefix + ".") for n in rule.qualified_names(node.value)
        ):
            continue  # the inner part of this chain is reported instead
        parent = parents.get(node)
        if prefix in names:
            if isinstance(parent, cst.Attribute) and parent.value is node:
                refs.append(AmpRef(parent, parent.attr.value))
            else:
                refs.append(AmpRef(node, ""))
            continue
        if isinstance(node, cst.Name):
            member = next((n[len(prefix) + 1 :] for n in sorted(names) if n.startswith(prefix + ".")), None)
            if member is not None:
                refs.append(AmpRef(node, member.split(".")[0]))
    return refs


_last_amp_refs: List[Any] = []


def _amp_refs(rule, module: cst.Module) -> List[AmpRef]:
    """``find_amp_refs(rule, module)``, once for the apex.amp rules that run on one text
    (``_per_tree``): it also reads the parameters the initialize rule recorded as apex.amp's."""
    state = rule.file_state()
    asked = (module, rule.parents, rule.repo_plan(), repr(state.get(FLAG_STATE_KEY)),
             repr(state.get("scaler_parameters")))
    return list(remembered(_last_amp_refs, asked, lambda: find_amp_refs(rule, module)))


def _possible_roots(module: cst.Module, prefix: str, also: Set[str]) -> Optional[Set[str]]:
    """The names a chain that denotes ``prefix`` or one of its members can start with: those
    an import binds in or above it, the first part of ``prefix`` (a module-level definition
    of that name gives its attributes the same qualified names), and ``also``; None when
    that cannot be told (a star import into it, text the stdlib does not read, a class or
    function named like ``prefix``'s first part: the names inside get qualified under it)."""
    first = prefix.split(".")[0]
    code = module_code(module)
    if re.search(rf"\b(class|def)\s+{re.escape(first)}\b", code):
        return None
    gate = statements_naming(code, module, (prefix,))
    if gate is None:
        return None
    return set(gate.names) | {first} | also


def _chain_root(node: cst.CSTNode) -> Optional[str]:
    """The name a ``Name`` or a chain of attributes starts with; None for any other start
    (a call, a subscript: such a chain is never skipped)."""
    while type(node) is cst.Attribute:
        node = node.value
    return node.value if type(node) is cst.Name else None


def globals_bound_to(parents: Any, module: cst.Module, prefix: str) -> Set[str]:
    """Names a function declares ``global`` and binds to apex.amp by an import in its body
    (``from apex import amp`` then ``global amp``): Python binds the module's name, read
    from every function, where the scope analysis, taking the statements in order, keeps
    the import local and leaves the other reads unresolved."""
    package, _, member = prefix.rpartition(".")
    found: Set[str] = set()
    if "global" not in module_code(module):  # no walk for the usual file
        return found
    #: function -> names its body (nested definitions included) declares global / imports amp as
    declared: Dict[cst.CSTNode, Set[str]] = {}
    bound: Dict[cst.CSTNode, Set[str]] = {}
    for node in walk_of(module, cst.Global, cst.ImportFrom, cst.Import):
        if isinstance(node, cst.Global):
            names, into = {n.name.value for n in node.names}, declared
        elif isinstance(node, cst.ImportFrom) and not node.relative and isinstance(node.names, Sequence):
            if node.module is None or code_of(node.module) != package:
                continue
            names = {
                code_of(a.asname.name) if a.asname else code_of(a.name) for a in node.names if code_of(a.name) == member
            }
            into = bound
        elif isinstance(node, cst.Import):
            names = {code_of(a.asname.name) for a in node.names if code_of(a.name) == prefix and a.asname}
            into = bound
        else:
            continue
        cur = node
        while cur in parents:
            cur = parents[cur]
            if isinstance(cur, cst.FunctionDef):
                into.setdefault(cur, set()).update(names)
    for func, names in bound.items():
        found |= names & declared.get(func, set())
    return found


def plain_read(parents, node: cst.Name) -> bool:
    """``node`` reads a variable: not an attribute's member, a keyword, a parameter, a
    definition's name, an import's alias or a name a ``global`` statement declares."""
    return (
        is_reference(parents, node)
        and not isinstance(parents.get(node), cst.NameItem)
        and not _inside_import(parents, node)
    )


# --- structure helpers -----------------------------------------------------------------------


def enclosing(parents, node: cst.CSTNode, kinds) -> Optional[cst.CSTNode]:
    cur = node
    while cur in parents:
        cur = parents[cur]
        if isinstance(cur, kinds):
            return cur
    return None


def takes_optional_scaler(parents: Any, func: Any, plan: Any) -> bool:
    """``func`` is an entry of ``plan`` whose GradScaler parameter defaults to None
    (``optional_scaler``): a top-level function of ``optional_entries``, or a method of a
    top-level class of ``optional_methods``."""
    if func is None or plan is None:
        return False
    if isinstance(parents.get(func), cst.Module):
        return func.name.value in plan.optional_entries
    cls = class_of_method(parents, func)
    return (
        cls is not None
        and isinstance(parents.get(cls), cst.Module)
        and (cls.name.value, func.name.value) in plan.optional_methods
    )


def class_of_method(parents: Any, func: Any) -> Any:
    """The class ``func`` is a plain method of (not static/class method), else None."""
    if func is None:
        return None
    block = parents.get(func)
    cls = parents.get(block) if block is not None else None
    if not isinstance(cls, cst.ClassDef):
        return None
    for deco in func.decorators:
        if code_of(deco.decorator) in ("staticmethod", "classmethod"):
            return None
    if not func.params.params:
        return None
    return cls


def self_name(func: Any) -> str:
    return func.params.params[0].name.value


def is_nested_in(parents, func: Optional[cst.CSTNode], outer: Optional[cst.CSTNode]) -> bool:
    """True if ``func`` is defined (at any depth) inside ``outer`` (any nodes)."""
    if func is None or outer is None:
        return False
    cur: Optional[cst.CSTNode] = func
    while cur in parents:
        cur = parents[cur]
        if cur is outer:
            return True
    return False


def call_args(call: cst.Call) -> Tuple[List[cst.Arg], Dict[str, cst.Arg]]:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    return positional, keywords


def arg_value(call: cst.Call, index: int, keyword: str) -> Optional[cst.BaseExpression]:
    positional, keywords = call_args(call)
    if keyword in keywords:
        return keywords[keyword].value
    if index < len(positional):
        return positional[index].value
    return None


def elements(expr: Optional[cst.BaseExpression]) -> List[cst.BaseExpression]:
    """The items of a list/tuple display, or ``[expr]``."""
    if expr is None:
        return []
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [e.value for e in expr.elements]
    return [expr]


def string_value(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    return None


def names_in(node: cst.CSTNode) -> Set[str]:
    return {n.value for n in walk_of(node, cst.Name)}


def assigned_names(stmt: cst.CSTNode) -> Set[str]:
    """Names (and ``self.x`` texts) a simple statement assigns to."""
    out: Set[str] = set()
    for node in walk_of(stmt, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr):
        targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
        for target in targets:
            out.update(code_of(item) for item in walk_of(target, cst.Name, cst.Attribute))
    return out


def optimizer_params(opt_text: str) -> str:
    """The parameters ``opt_text`` steps: what ``amp.master_params(opt)`` yielded (apex
    read them from the optimizer's param groups too)."""
    return f'(p for group in {opt_text}.param_groups for p in group["params"])'


def keyed_optimizer(opt: Any) -> bool:
    """``optimizer["generator"]``: one optimizer of a dict (or list) picked by a literal key from
    a plain name or attribute; its steps are found by that same text, as a name's are."""
    if not isinstance(opt, cst.Subscript) or not isinstance(opt.value, (cst.Name, cst.Attribute)):
        return False
    if len(opt.slice) != 1 or not isinstance(opt.slice[0].slice, cst.Index):
        return False
    return isinstance(opt.slice[0].slice.value, (cst.SimpleString, cst.Integer))


def backs_a_loss(call: cst.Call) -> bool:
    """``x.backward(...)`` or ``amp.scale_loss(...)``."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in ("backward", "scale_loss")


def backs_loss_in(node: cst.CSTNode) -> bool:
    """Whether ``node`` (a statement, a block) holds a call that backs a loss (``backs_a_loss``)."""
    return any(isinstance(n, cst.Call) and backs_a_loss(n) for n in walk(node))


def step_calls(func_body: cst.CSTNode, optimizer_text: str) -> List[cst.Call]:
    """``<optimizer>.step(...)`` calls under ``func_body``."""
    found = []
    for node in walk_of(func_body, cst.Call):
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "step"
            and code_of(node.func.value) == optimizer_text
        ):
            found.append(node)
    return found


# --- the analysis ----------------------------------------------------------------------------


#: why a gradient read inside the ``with amp.scale_loss(...)`` block keeps apex.amp
_SCALED_INSIDE = (
    "{code} {use} inside the amp.scale_loss block, where (O1) apex's gradients are still scaled and "
    "hold only this backward's: a clip there cuts the scaled gradients at its threshold before apex "
    "divides them by the loss scale, so moving it after scaler.unscale_() changes what trains, and a "
    "GradScaler's gradients hold every backward since the step, so a clip right after "
    "scaler.scale(loss).backward() is the same only where the step and zero_grad() follow every "
    "backward and the opt level is O1 under the default flags (written in the script, or a flag of "
    "this file whose default is O1; under O2 the block's master gradients are still empty and apex's "
    "clip there did nothing), which is not proven here"
)


def _clips_inside(rule, blocks: Set[cst.With]) -> List[Tuple[cst.Call, cst.With]]:
    """The calls of torch's clipping functions in the bodies of the scale_loss ``blocks``."""
    found = []
    for block in blocks:
        for node in walk(block.body):
            if isinstance(node, cst.Call) and rule.qualified_names(node.func) & CLIP_FUNCTIONS:
                found.append((node, block))
    return found


def _scale_loss_blocks(parents: Dict[Any, Any], refs: List[AmpRef]) -> Set[cst.With]:
    """The ``with amp.scale_loss(...)`` statements among ``refs``."""
    blocks = set()
    for ref in refs:
        call = parents.get(ref.expr)
        item = parents.get(call)
        block = parents.get(item)
        if ref.member == "scale_loss" and isinstance(item, cst.WithItem) and isinstance(block, cst.With):
            blocks.add(block)
    return blocks


def _inside_any(parents: Dict[Any, Any], node: Any, blocks: Set[cst.With]) -> Optional[cst.With]:
    """The one of ``blocks`` whose body holds ``node``, if any."""
    while node is not None:
        parent = parents.get(node)
        if parent in blocks and parent.body is node:
            return parent
        node = parent
    return None


def analyse(rule, module: cst.Module) -> AmpFile:
    """Collect the apex.amp sites of ``module`` and decide how the scaler reaches them."""
    info = AmpFile(refs=_amp_refs(rule, module))
    refused = planned_refusals(rule, module)  # the plan's function whose parameter cannot carry it
    plan = rule.repo_plan()
    planned_steps = plan is not None and bool(plan.stepped_calls)
    if not info.refs and not refused and not planned_steps:
        return info
    parents = rule.parents
    used = set(_names_in_use(module, parents))
    # the class placement keeps the scaler and the switch on ``self``: a ``self.scaler`` the
    # file already has (its own torch.cuda.amp path) must not be overwritten by ours
    used |= self_attributes(module)
    info.plan = plan
    # and one a base or a subclass of another file sets or reads on the same instance
    used |= set(info.plan.family_attributes) if info.plan is not None else set()
    info.scaler_name = free_name(SCALER_NAMES + ("amp_grad_scaler",), used)
    if info.plan is not None and info.plan.scaler_name:
        info.scaler_name = info.plan.scaler_name
    info.switch_name = free_name(SWITCH_NAMES + ("amp_switch",), used)
    info.option_locals = next(
        (names for names in OPTION_LOCALS if not set(names) & used), tuple("apex_" + n for n in OPTION_LOCALS[0])
    )
    wanted = _wanted_loss_scalers(rule, info)
    given_args: Set[cst.CSTNode] = set()
    given_params = amp_parameters(rule, module)
    refused_args = outside_refusals(rule, module) if info.plan is not None else {}
    flagged = flag_args(rule, module)
    info.flag_args = {node: flag for node, flag, _f, _p in flagged}
    info.flag_helpers = {helper: param for _n, _f, helper, param in flagged}
    initializing = {n: why for n, why in initializing_refusals(rule, module).items() if n not in info.flag_args}
    refused_args.update(initializing)
    info.initialized_in_callee = next(iter(initializing.values()), "")
    for callee, (param, args) in given_params.items():
        info.access[callee] = param  # the parameter carries the GradScaler there
        given_args.update(a.value for a in args)
    info.blockers.extend(Blocker(node, why) for node, why in refused.items())
    info.given_by_launchers = set(planned_parameters(rule, module))
    handles: Dict[str, InitSite] = {}
    scaling_blocks = _scale_loss_blocks(parents, info.refs)
    inside: List[Tuple[cst.Call, cst.With]] = []  # amp.master_params(...) in a scale_loss block

    for ref in info.refs:
        parent = parents.get(ref.expr)
        is_call = isinstance(parent, cst.Call) and parent.func is ref.expr
        member = ref.member
        if member == "" and ref.expr in info.flag_args:
            continue  # handed to a helper that only tests it: the caller's test instead
        if member == "":
            check = availability_check(parents, ref.expr)
            if check is not None and enclosing_function(parents, ref.expr) in given_params:
                # apex.amp or None: the test asks whether amp is on, the scaler's switch
                func = enclosing_function(parents, ref.expr)
                info.needs.append(Need(check[0], "amp_param_on" if check[1] else "amp_param_off", func))
            elif check is not None:
                info.checks[check[0]] = check[1]
            elif ref.expr in given_args or _given_to_a_planned_call(parents, ref.expr, info.plan):
                info.needs.append(Need(ref.expr, "amp_param", enclosing_function(parents, ref.expr)))
            elif _given_for_the_scaler(parents, ref.expr, info.plan):
                info.needs.append(Need(ref.expr, "amp_value", enclosing_function(parents, ref.expr)))
            else:
                route = carrier_route(rule, module, ref.expr, info.plan) if info.carrier is None else None
                if isinstance(route, CarrierRoute):
                    info.carrier = route
                    info.stored_as = f"{route.carrier}.{route.attribute}"
                    info.access.update(route.access)
                    info.refs.extend(AmpRef(use, member) for use, member in route.uses)  # handled below
                    continue
                message = "apex.amp is passed on as a value here; its uses cannot be followed"
                callee = enclosing_function(parents, ref.expr)
                if isinstance(parent, cst.Return) and callee is not None:
                    message = (
                        f"apex.amp is returned by {callee.name.value}() here: what its callers do with the module "
                        "they get (amp.initialize, amp.scale_loss on it) is not followed, and no GradScaler can "
                        "stand for a module handed back as a value"
                    )
                if callee in given_params:
                    message = (
                        f"apex.amp (or None) is given to {callee.name.value}() as its parameter "
                        f"{given_params[callee][0]}, which passes it on as a value here, so that parameter "
                        "cannot carry the GradScaler"
                    )
                handed = _handed_where(rule, ref.expr) if message.startswith("apex.amp is passed on") else None
                if handed is not None and ref.expr not in refused_args:
                    info.handed_on.append(handed)
                message = refused_args.get(ref.expr, message)
                if message.startswith("apex.amp is passed on"):
                    message = _value_route_refusal(parents, ref.expr, info.plan) or message
                holder = _stored_on_an_object(parents, ref.expr)
                if holder is not None:
                    info.stored_as = holder
                    message = f"apex.amp is stored as {holder} here; its uses through that attribute cannot be followed"
                    if route:
                        message += f" ({route})"
                        facts = getattr(info.plan, "carrier", None)
                        info.lending_refused = route if facts is not None and facts.borrowed else ""
                # a plan note would rest on the plan's view that no file initializes here
                note = plan_note(rule, info, ref.expr) if ref.expr not in initializing else None
                info.blockers.append(Blocker(ref.expr, f"{message} ({note})" if note else message))
        elif member == "__dict__" and _member_probe(parents, ref.expr) is not None:
            probe = _member_probe(parents, ref.expr)
            info.checks[probe[0]] = probe[1]  # type: ignore[index]
        elif member == VERSION_MEMBER and (printed := version_print(parents, ref.expr)) is not None:
            info.version_prints.append(printed)
        elif member not in HANDLED_MEMBERS:
            info.blockers.append(Blocker(ref.expr, f"amp.{member} has no native rewrite"))
        elif member in ("initialize", "init") and is_call:
            site = _init_site(rule, parent, member == "init", info)
            if site is None:
                info.refused_inits += 1
            else:
                info.inits.append(site)
                if site.handle:
                    handles[site.handle] = site
        elif member == "scale_loss" and is_call:
            scaled = _scale_loss_site(rule, parent, info)
            if scaled is not None:
                info.scale_losses.append(scaled)
            else:
                info.refused_scales.append(_where(enclosing_function(parents, parent)))
        elif member in ("state_dict", "load_state_dict", "master_params") and is_call:
            block = _inside_any(parents, parent, scaling_blocks) if member == "master_params" else None
            if block is not None:
                inside.append((parent, block))
            elif member == "state_dict" and parent.args:
                info.blockers.append(Blocker(parent, "amp.state_dict(destination) has no native rewrite"))
            else:
                info.needs.append(Need(parent, member, enclosing_function(parents, parent)))
        elif member == "_amp_state":
            _amp_state_use(rule, ref, info)
        elif member in ("initialize", "init", "scale_loss", "state_dict", "load_state_dict", "master_params"):
            info.blockers.append(Blocker(ref.expr, f"amp.{member} is used without being called here"))
        # casting hooks need no scaler; their own rule handles them

    for call, block in inside:
        if exit_unscale_count(rule, module, call, block, info) is None:
            info.blockers.append(Blocker(call, _SCALED_INSIDE.format(code=code_of(call), use="is read")))
        else:
            info.needs.append(Need(call, "master_params", enclosing_function(parents, call)))
    # a torch clip of other parameters in the block: the same gradients (the unscale_ follows
    # the block there too), so the same proof or the shim
    around_master = {id(n) for call, _ in inside for n in _ancestors(parents, call)}
    for clip, block in _clips_inside(rule, scaling_blocks):
        if id(clip) not in around_master and exit_unscale_count(rule, module, clip, block, info) is None:
            info.blockers.append(Blocker(clip, _SCALED_INSIDE.format(code=code_of(clip), use="runs")))
    for clip, why in o2_model_clips(rule, module, info):
        info.blockers.append(Blocker(clip, why))
    for site in info.inits:
        if not (site.has_optimizers or site.old_api):
            handler = _catching_handler(rule.parents, site)
            if handler is not None:
                info.blockers.append(Blocker(site.call, _CAUGHT_INITIALIZE.format(call=code_of(site.call), handler=handler)))
            continue  # no GradScaler replaces an initialize for inference
        site.stale_guard = _guard_set_by_its_branch(rule.parents, site, info.training_inits)
    if info.carrier is not None and info.inits:  # the later rules run after the initialize is gone
        why = initialized_before(rule, info.carrier, info.training_inits)
        if why is not None:
            info.blockers.append(Blocker(info.carrier.store, f"apex.amp is stored as {info.stored_as} here; {why}"))
    _old_api_uses(rule, module, handles, info)
    _module_probes(rule, module, info)
    shared_why = _one_scaler_per_loss(rule, info, wanted)
    _check_scale_reads(rule, info, wanted, shared_why)
    if info.loss_scalers > 1 and not (info.plan is not None and info.plan.scaler_name):
        info.scaler_name = free_name(SCALERS_NAMES + ("amp_grad_scalers",), used)
    if info.plan is not None:
        _planned_sites(rule, module, info)
    info.unbound_scales = [
        _where(enclosing_function(parents, use))
        for use, _message in unbound_amp_uses(rule, module)
        if use.attr.value == "scale_loss"
    ]
    _check_layout(rule, info)
    _narrowed_steps(rule, info)
    if not info.scaler_in_branch and not (info.plan is not None and info.plan.refusal):
        # no native place for a scaler under a run-once guard; alternatives (each branch of
        # one if/else initializes) create theirs in place, where the test that chose it holds
        # branches that are alternatives where the checks above stopped before saying so, at a
        # site already refused for another reason: no run-once guard to report there
        # (DeepDeblur's ``if model.model.D is None:`` picks the optimizers, in a file that scales nothing)
        unsaid = len(info.training_inits) > 1 and _alternatives(parents, info.training_inits)
        for site in info.inits:
            if info.alternatives and site in info.training_inits:
                continue
            if unsaid and site in info.training_inits and any(b.node is site.call for b in info.blockers):
                continue
            stale = site.stale_guard
            said = any(b.node is site.call and b.message.startswith(stale or "") for b in info.blockers)
            if stale is not None and not said:
                info.blockers.append(Blocker(site.call, stale))
    for site in info.training_inits:
        if site.setup_if is not None and (why := setup_pass_refusal(site, info)):
            info.blockers.append(Blocker(site.call, why))
    _check_settings(rule, info)
    from ._amp_after_backward import mark

    mark(rule, info)  # what the autocast placement decided for a term backed after the step's backward
    return info


#: why an initialize for inference alone in a try whose handler catches what it raises stays
_CAUGHT_INITIALIZE = (
    "{call} (no optimizers) is alone in a try whose `{handler}` handler catches what apex raises there when it "
    "is not given a model (a TypeError): the handler may be the path that runs, and with the initialize "
    "gone it never would"
)
#: exceptions a handler catches a TypeError with
_CATCHES_TYPE_ERROR = frozenset({"TypeError", "Exception", "BaseException"})


def _catching_handler(parents: Any, site: InitSite) -> Optional[str]:
    """The handler (``except:``, ``except Exception:``...) of the ``try`` whose body is
    ``site``'s statement alone that would catch apex's TypeError for an argument that is no
    model (cryodrgn: ``self.scaler = None`` ... ``try: self.scaler = amp.initialize(self.scaler,
    opt_level="O1") except: self.scaler = torch.cuda.amp.GradScaler()``); None otherwise."""
    block = parents.get(site.stmt)
    owner = parents.get(block)
    if not isinstance(owner, cst.Try) or owner.body is not block or len(block.body) != 1:
        return None
    for handler in owner.handlers:
        kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        names = {code_of(k.value if isinstance(k, cst.Element) else k) for k in kinds if k is not None}
        if handler.type is None or names & _CATCHES_TYPE_ERROR:
            return code_of(handler.with_changes(body=cst.IndentedBlock(body=[]), leading_lines=())).split(":")[0]
    return None


def dynamic_init(site: InitSite) -> bool:
    """Whether the initialize provably makes a dynamic loss scaler: no ``loss_scale`` (or
    ``loss_scale="dynamic"``), and no positional argument that could be it."""
    position = 1 if site.old_api else 8
    value = arg_value(site.call, position, "loss_scale")
    return value is None or string_value(value) == "dynamic"


def _static_init(site: InitSite) -> bool:
    """Whether the initialize provably makes a static loss scaler (``loss_scale=128.0``)."""
    value = arg_value(site.call, 1 if site.old_api else 8, "loss_scale")
    return isinstance(value, (cst.Integer, cst.Float)) or (
        isinstance(value, cst.BinaryOperation)
        and isinstance(value.left, cst.Integer)
        and isinstance(value.right, cst.Integer)
    )


def _check_settings(rule, info: AmpFile) -> None:
    """apex ignores ``_scale_seq_len`` on a static loss scaler, while a GradScaler's growth
    interval applies always: it is set only where the scaler is provably dynamic (the file's
    initializes, or the cross-file plan's for a scaler that arrives from another file), and
    dropped (kind ``ignored_setting``) where it is provably static."""
    static = False
    if info.training_inits:
        dynamic = all(dynamic_init(site) for site in info.training_inits)
        static = all(_static_init(site) for site in info.training_inits)
    elif info.plan is None or info.plan.component is None:
        return  # no scaler reaches this file: its sites already say so
    else:
        dynamic = info.plan.dynamic_scaler
    if dynamic:
        return
    for need in info.needs:
        if need.kind == "scaler_setting" and need.node.body[0].targets[0].target.attr.value == "_scale_seq_len":
            if static:
                need.kind = "ignored_setting"
                continue
            info.blockers.append(
                Blocker(
                    need.node,
                    "apex ignores _scale_seq_len when the loss scale is static, and this scaler's loss scale is "
                    "not provably dynamic: a GradScaler growth interval would change how it trains",
                )
            )


def _wanted_loss_scalers(rule, info: AmpFile) -> int:
    """``num_losses=N`` of this file's training initialize (a literal), else what the
    initialize rule created here, else what the cross-file plan says; 1 otherwise."""
    counts = set()
    for ref in info.refs:
        call = rule.parents.get(ref.expr)
        if ref.member == "initialize" and isinstance(call, cst.Call) and call.func is ref.expr:
            value = arg_value(call, 99, "num_losses")
            if value is None and info.plan is not None and info.plan.losses_at_run_time:
                counts.add(info.plan.loss_scalers)  # sized from the options dict when it runs
                continue
            counts.add(int(value.value) if isinstance(value, cst.Integer) else 1)
    if counts:
        return counts.pop() if len(counts) == 1 else 1
    made = rule.file_state().get("loss_scalers")
    if made:
        return made
    return info.plan.loss_scalers if info.plan is not None else 1


def _one_scaler_per_loss(rule, info: AmpFile, wanted: int) -> str:
    """apex keeps one dynamic loss scaler per loss id (``num_losses=2``): its own scale, its
    own count of clean steps, its own entry in the checkpoint.  One GradScaler per loss id
    does the same when every ``loss_id`` is a number below N and each optimizer is stepped
    after the losses of one loss id.  Otherwise (an optimizer fed by two loss ids, whose
    gradients one GradScaler.step must see at one scale) one GradScaler serves every loss,
    unless the cross-file plan already passes their list to other files (a blocker then).
    Returns why one GradScaler serves every loss of several loss ids ("" otherwise)."""
    if wanted <= 1:
        return ""
    ids: Dict[str, Set[int]] = {}
    why = ""
    for site in info.scale_losses:
        value = arg_value(site.call, 2, "loss_id")
        if value is not None and not isinstance(value, cst.Integer):
            glued = _glued_loss_id(rule, info, site, value)
            if glued:
                # a launcher without apex.amp gives it a number at each call (``glue_plan``):
                # the GradScaler of that loss id is picked where it is used
                site.loss_id = glued  # type: ignore[assignment]
                for opt in site.optimizers:
                    ids.setdefault(code_of(opt), set()).add(glued)  # type: ignore[arg-type]
                continue
            by_call = _loss_ids_of_calls(rule, site, value)
            read = _loss_id_read_at_run_time(rule, info, site, value)
            if by_call is None and read:
                # a reader of the module's GradScalers: the list is indexed by the parameter
                # when it runs, as apex indexed its loss scalers
                site.loss_id = read  # type: ignore[assignment]
                for opt in site.optimizers:
                    ids.setdefault(code_of(opt), set()).add(read)  # type: ignore[arg-type]
                continue
            late = rule.file_state().get("run_time_loss_ids", {}).get(("late",) + _loss_id_key(info, site, value))
            if by_call is None and late:
                why = (
                    f"loss_id={code_of(value)} is read when the function runs, while {late} may also step the "
                    "backwards of earlier calls, scaled under other loss ids"
                )
                break
            if by_call is None:
                why = f"loss_id={code_of(value)} is not a number"
                break
            site.call_loss_ids = {link.call: loss_id for link, loss_id in by_call}
            too_big = [i for i in site.call_loss_ids.values() if i >= wanted]
            if too_big:
                why = f"loss_id={too_big[0]} is not below num_losses={wanted}"
                break
            for link, loss_id in by_call:
                for text in link.optimizers.values():
                    ids.setdefault(text, set()).add(loss_id)
            continue
        site.loss_id = int(value.value) if isinstance(value, cst.Integer) else 0
        if site.loss_id >= wanted:
            why = f"loss_id={site.loss_id} is not below num_losses={wanted}"
            break
        for opt in site.optimizers:
            ids.setdefault(code_of(opt), set()).add(site.loss_id)
    shared = next((text for text, found in ids.items() if len(found) > 1), None)
    if not why and shared is not None:
        why = f"{shared} is stepped after the losses of loss ids {', '.join(map(str, sorted(ids[shared])))}"
    if not why:
        info.loss_scalers = wanted
        info.loss_ids = {text: found.pop() for text, found in ids.items()}
        return ""
    for site in info.scale_losses:
        site.loss_id, site.call_loss_ids = 0, {}
    if info.plan is not None and info.plan.loss_scalers > 1:
        info.blockers.append(
            Blocker(
                info.scale_losses[0].with_stmt if info.scale_losses else info.refs[0].expr,
                f"the GradScalers come from another file, one per loss id (num_losses={wanted}), but {why}",
            )
        )
    return why


def _loss_id_read_at_run_time(rule, info: AmpFile, site: ScaleLossSite, value: Any) -> str:
    """``def loss_backward(opt, losses, optimizer, loss_id)`` in a reader of the module-level
    GradScalers (APX252), one per loss id: ``loss_id`` (a parameter the function never
    assigns) picks its GradScaler when the function runs, as it picked apex's loss scaler,
    provided every step of the site's optimizers is in the function and follows each
    backward (no backward of another call, under another loss id, adds up to it); "" else."""
    func = site.func
    if info.plan is None or not info.plan.module_reader or info.training_inits or func is None:
        return ""
    if not isinstance(value, cst.Name) or value.value not in param_names(func.params):
        return ""
    # decided on the file as it came (the first rule to ask): the step rule's rewrite moves
    # the steps into an if of their own, which later rules see
    decided = rule.file_state().setdefault("run_time_loss_ids", {})
    key = _loss_id_key(info, site, value)
    if key in decided:
        return decided[key]
    decided[key] = ""
    if any(value.value in assigned_names(n) for n in walk(func.body) if isinstance(n, cst.SimpleStatementLine)):
        return ""
    steps = [call for opt in site.optimizers for call in find_steps(rule, site, code_of(opt))]
    late = next((c for c in steps if not follows_each_backward(rule.parents, site.with_stmt, c)), None)
    if late is not None:
        # kept for the refusal: the GradScaler of this call's loss id would step the gradients
        # of earlier calls' backwards, which others scaled
        decided[("late",) + key] = code_of(late)
    if not steps or late is not None:
        return ""
    decided[key] = value.value
    return value.value


def _loss_id_key(info: AmpFile, site: ScaleLossSite, value: Any) -> Tuple[str, str, int]:
    """The site's function, its loss id's text and its rank among the function's sites."""
    func = site.func
    rank = [s for s in info.scale_losses if s.func is func].index(site)
    return (func.name.value if func is not None else "", code_of(value), rank)


def _glued_loss_id(rule, info: AmpFile, site: ScaleLossSite, value: Any) -> str:
    """The parameter given as ``loss_id`` to this scale_loss of a helper the glue route hands
    the list of GradScalers, whose every call the launcher makes with a number below N
    (``FilePlan.glued_loss_ids``), where this file leaves it as it is; "" otherwise."""
    func = site.func
    if info.plan is None or not isinstance(value, cst.Name) or func is None:
        return ""
    if (func.name.value, value.value) not in info.plan.glued_loss_ids:
        return ""
    if not isinstance(rule.parents.get(func), cst.Module) or any(
        value.value in assigned_names(n) for n in walk(func.body) if isinstance(n, cst.SimpleStatementLine)
    ):
        return ""
    return value.value


def _loss_ids_of_calls(rule, site: ScaleLossSite, value: Any) -> Optional[List[Tuple["CallerLink", int]]]:
    """``def backwards(fp16, loss, opt, loss_id): with amp.scale_loss(loss, opt, loss_id)``: the
    loss id each call of the module-level helper gives (a number, by position, keyword or the
    parameter's default), with the call's link (``caller_links``); None when ``loss_id`` is no
    parameter the helper leaves as it is or a call gives no number."""
    func = site.func
    if not isinstance(value, cst.Name) or func is None or not isinstance(rule.parents.get(func), cst.Module):
        return None
    params = list(func.params.posonly_params) + list(func.params.params)
    param = next((p for p in params + list(func.params.kwonly_params) if p.name.value == value.value), None)
    if param is None or any(value.value in assigned_names(n) for n in walk(func.body) if isinstance(n, cst.SimpleStatementLine)):
        return None
    links = caller_links(rule, site)
    if not links:
        return None
    found = []
    for link in links:
        shift = bound_offset(rule, link.call)
        index = params.index(param) if param in params else len(link.call.args) + 1 + shift
        given = arg_value(link.call, index - shift, value.value) if index >= shift else None
        given = given if given is not None or index < shift else param.default
        if not isinstance(given, cst.Integer):
            return None
        found.append((link, int(given.value)))
    return found


def _check_scale_reads(rule, info: AmpFile, wanted: int, shared_why: str) -> None:
    """``amp._amp_state.loss_scalers[i].loss_scale()`` is the current scale of apex's loss
    scaler ``i``: natively the ``get_scale()`` of loss id ``i``'s GradScaler where there is one
    per loss id, of the one GradScaler where apex kept one scaler too.  Where apex kept
    several and one GradScaler serves them all, or the count is no number, no GradScaler
    holds that scale; a loss id apex had no scaler for raised IndexError there.  A setting
    of loss scaler ``i`` (``._loss_scale = x``) goes to the same GradScaler, on the same
    conditions."""
    uses = [need for need in info.needs if need.kind in ("get_scale", "scaler_setting", "scaler_list", "each_scale")]
    if not uses:
        return
    unknown = _unknown_loss_count(rule, info, wanted)
    # counted in another file, where a count that is no number reads as 1
    uncounted = unknown is None and not info.training_inits and wanted <= 1
    refused: Set[int] = set()
    for need in uses:
        if need.kind == "scaler_setting":
            attr = need.node.body[0].targets[0].target.attr.value
            what = f"private amp._amp_state use: it sets {attr} of apex's loss scaler {need.loss_id} (one per loss id)"
        elif need.kind == "each_scale":
            continue  # said with its list
        elif need.kind == "scaler_list":
            what = (
                "private amp._amp_state use: it reads the current scale of every one of apex's loss scalers (one per "
                "loss id), going over amp._amp_state.loss_scalers"
            )
        else:
            what = (
                f"private amp._amp_state use: it reads the current scale of apex's loss scaler {need.loss_id} "
                f"(one per loss id)"
            )
        if need.kind == "scaler_setting" and wanted <= 1 and need.loss_id == 0 and unknown is None:
            continue
        if isinstance(need.loss_id, str):  # a loss id that is no number, read in place
            why = _indexed_read_refusal(need, wanted, info, unknown, shared_why)
            if why is None:
                between = _read_before_step(rule, info, need)
                if between is None:
                    continue
                why = (
                    f"private amp._amp_state use: it reads the current scale of apex's loss scaler for the loss id "
                    f"{need.loss_id}, after an amp.scale_loss block and before {code_of(between[1])} in "
                    f"{need.func.name.value}(): apex updated that scale where the block exited, a GradScaler "
                    "updates it in scaler.update() after the step, so there the two differ"
                )
            info.blockers.append(Blocker(need.node, why))
            refused.add(id(need.node))
            continue
        if uncounted and (need.kind == "scaler_list" or need.loss_id >= wanted):
            why = f"{what}: how many apex keeps (the num_losses of its amp.initialize) is not told in this file"
        elif unknown is not None and need.kind == "scaler_list":
            why = f"{what}, of num_losses={unknown}: how many GradScalers stand for them is not told here"
        elif unknown is not None:
            why = f"{what}, of num_losses={unknown}: which GradScaler holds that scale is not told here"
        elif need.loss_id >= wanted:
            why = f"{what}, but apex made num_losses={wanted}: this read raises IndexError, apex.amp kept for it"
        elif wanted > 1 and info.loss_scalers == 1:
            why = (
                f"{what}, of num_losses={wanted}, but natively one GradScaler serves every loss ({shared_why}): "
                "its scale is not that loss scaler's"
            )
        elif need.kind == "scaler_setting":
            continue
        else:
            between = _read_before_step(rule, info, need)
            if between is None:
                continue
            why = (
                f"{what}, after an amp.scale_loss block and before {code_of(between[1])} in "
                f"{need.func.name.value}(): apex updated that scale where the block exited "
                "(halved on an overflow, doubled after its run of clean steps), a GradScaler updates it in scaler.update() "
                "after the step, so there the two differ"
            )
        where = need.via if need.via is not None else need.node  # a local's reads: said once, where it is bound
        if not any(b.node is where and b.message == why for b in info.blockers):
            info.blockers.append(Blocker(where, why))
        if need.kind == "scaler_list":
            refused.add(id(need.node))
    # a loop or read left to apex needs no GradScaler here (its reason is said once); in a
    # file without the initialize, that none reaches it is said too
    if info.training_inits:
        info.needs = [n for n in info.needs if id(n.node) not in refused and id(n.via) not in refused]


def _indexed_read_refusal(need: Need, wanted: int, info: AmpFile, unknown: Optional[str], shared: str) -> Optional[str]:
    """Why the read of apex's loss scaler ``loss_scalers[code]`` (``code``, the need's loss id,
    no number) has no GradScaler picked by the same index: only a list of them as long as
    apex's has one (None then)."""
    if unknown is None and wanted > 1 and info.loss_scalers == wanted:
        return None
    code = need.loss_id
    params = [p.name.value for p in need.func.params.params] if isinstance(need.func, cst.FunctionDef) else []
    given = f" (a parameter of {need.func.name.value}())" if code in params else ""
    what = (
        f"private amp._amp_state use: it reads the current scale of apex's loss scaler for the loss id {code}{given}, "
        "which is no number"
    )
    if unknown is not None:
        return f"{what}, of num_losses={unknown}: which GradScaler holds that scale is not told here"
    if wanted > 1:
        return f"{what}, of num_losses={wanted}, but natively one GradScaler serves every loss ({shared})"
    if not info.training_inits:
        return f"{what}: how many loss scalers apex keeps (the num_losses of its amp.initialize) is not told in this file"
    return f"{what}: apex kept one loss scaler, and nothing here proves the loss id is 0 (any other raised IndexError)"


def _read_before_step(rule, info: AmpFile, need: Need) -> Optional[Tuple[cst.With, cst.Call]]:
    """A scale_loss block of the read's function that ends before the read and a step of its
    optimizer in that function after the read (the block and the step), if any.  The reason
    names no line: the TODO written above the read moves the lines after it."""
    if not isinstance(need.func, cst.FunctionDef):
        return None
    line = rule.line_of(need.node)
    for site in info.scale_losses:
        if site.func is not need.func or rule.position(site.with_stmt).end.line >= line:
            continue
        for opt in site.optimizers:
            later = [c for c in step_calls(need.func.body, code_of(opt)) if rule.line_of(c) > line]
            if later:
                return site.with_stmt, later[0]
    return None


def _unknown_loss_count(rule, info: AmpFile, wanted: int) -> Optional[str]:
    """The ``num_losses`` of an initialize of this file (its code) when it is not the count
    ``wanted`` was read as: no number, or given by position."""
    for ref in info.refs:
        call = rule.parents.get(ref.expr)
        if ref.member == "initialize" and isinstance(call, cst.Call) and call.func is ref.expr:
            value = arg_value(call, 10, "num_losses")
            if value is not None and not (isinstance(value, cst.Integer) and int(value.value) == wanted):
                return code_of(value)
    return None


def call_given(parents, node: cst.CSTNode) -> Optional[cst.Call]:
    """The call ``node`` is a plain argument of (``f(x, node)``, ``f(amp=node)``, also as the
    one branch of ``f(amp=node if use_amp else None)`` whose other is None), if any."""
    choice = parents.get(node)
    if isinstance(choice, cst.IfExp) and node in (choice.body, choice.orelse):
        other = choice.orelse if node is choice.body else choice.body
        if isinstance(other, cst.Name) and other.value == "None":
            node = choice
    arg = parents.get(node)
    call = parents.get(arg)
    if isinstance(arg, cst.Arg) and arg.value is node and isinstance(call, cst.Call):
        return call
    return None


def _given_to_a_planned_call(parents, node: cst.CSTNode, plan: Any) -> bool:
    """``train_one_epoch(model, loader, optimizer, amp)`` where the cross-file plan proved
    that the function of another file scales through the parameter this argument fills
    (``amp_value_plan``): the GradScaler goes in its place."""
    call = call_given(parents, node) if plan is not None else None
    return (
        call is not None
        and code_of(call.func) in plan.amp_value_calls
        and not any(a.star for a in call.args)  # (the argument's own star among them)
    )


def _value_route_refusal(parents, node: cst.CSTNode, plan: Any) -> str:
    """Why the call that ``node`` (apex.amp) is an argument of cannot hand the GradScaler to
    the function of another file that scales through that parameter (``amp_value_plan``)."""
    call = call_given(parents, node) if plan is not None else None
    if call is None:
        return ""
    why = dict(plan.amp_value_refusals).get(code_of(call.func), "")
    return f"apex.amp is passed on as a value here: {why}" if why else ""


def _given_for_the_scaler(parents, node: cst.CSTNode, plan: Any) -> bool:
    """``restore(path, model, optimizer, amp=amp)`` where the cross-file plan proved that
    ``restore`` only saves/loads the state of what it is given there (``amp_arguments``)."""
    call = call_given(parents, node) if plan is not None else None
    return call is not None and code_of(call.func) in plan.amp_arguments


def _module_probes(rule, module: cst.Module, info: AmpFile) -> None:
    """``"apex" in sys.modules`` (Transformer-XL: ``raise RuntimeError("APEX AMP
    unavailable ...")`` unless it holds): an availability check like ``amp is not None``,
    as long as the file imports nothing from apex but apex.amp (else apex's other parts
    may be what it guards)."""
    for node in walk_of(module, cst.Import, cst.ImportFrom):
        names = [code_of(node.module)] if isinstance(node, cst.ImportFrom) and node.module else []
        if isinstance(node, cst.Import):
            names = [code_of(a.name) for a in node.names]
        elif names == ["apex"] and not isinstance(node.names, cst.ImportStar):
            names = [f"apex.{code_of(a.name)}" for a in node.names]
        if any(n.split(".")[0] == "apex" and n not in ("apex", AMP) for n in names):
            return
    for node in walk_of(module, cst.Comparison):
        if len(node.comparisons) != 1:
            continue
        target = node.comparisons[0]
        if (
            string_value(node.left) in ("apex", AMP)
            and isinstance(target.operator, (cst.In, cst.NotIn))
            and "sys.modules" in rule.qualified_names(target.comparator)
        ):
            info.checks[node] = isinstance(target.operator, cst.In)


def _planned_sites(rule, module: cst.Module, info: AmpFile) -> None:
    """The cross-file plan's calls that pass the scaler (needs of the calling function) and
    its entry definitions (the scaler arrives there as a new parameter)."""
    plan = info.plan
    parents = rule.parents
    for node in walk_of(module, cst.Call):
        if isinstance(node.func, (cst.Name, cst.Attribute)):
            keyword = plan.keyword_for(code_of(node.func))
            if keyword is not None:
                info.passes[node] = keyword
                info.needs.append(Need(node, "pass_scaler", enclosing_function(parents, node)))
    _loss_calls(rule, module, info)
    _stepped_calls(rule, info)
    _framework_sites(rule, module, info)
    _received_sites(rule, module, info)
    methods = dict.fromkeys(plan.method_entries)
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and any(cls == stmt.name.value for cls, _m in methods):
            for method in methods_of(stmt):
                if (stmt.name.value, method.name.value) in methods and class_of_method(parents, method) is stmt:
                    info.entry_functions.add(method)  # the scaler arrives as its parameter
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in plan.entries:
            info.entry_functions.add(stmt)
        elif isinstance(stmt, cst.ClassDef) and stmt.name.value in plan.entries:
            if init_method(stmt) is None:
                # a wrapper with no __init__ and no base class (``class ApexScaler:``) becomes
                # a GradScaler holder: it gets an ``__init__`` that takes and keeps the scaler
                bases = [code_of(b.value) for b in stmt.bases]
                if bases not in ([], ["object"]) or stmt.decorators or any(
                    isinstance(n, cst.Name) and n.value == stmt.name.value and n is not stmt.name
                    for n in walk(module)
                ):
                    info.blockers.append(
                        Blocker(stmt, f"class {stmt.name.value} has no __init__ to take the GradScaler from callers")
                    )
                    continue
                info.new_inits.add(stmt)
                info.class_threaded[stmt] = []
                continue
            calls = _class_callers(rule, stmt, cross_file=True)
            if calls is None:
                info.blockers.append(
                    Blocker(stmt, f"class {stmt.name.value} is used other than by calls: no GradScaler can follow it")
                )
                continue
            info.class_threaded[stmt] = calls


def _received_sites(rule, module: cst.Module, info: AmpFile) -> None:
    """The plan's ``received``: ``a, b, opt = create_optimizer(...)``, a statement of the
    function's own body, unpacks the GradScaler the factory of another file returns as one
    more value; from there on the function has it (else a blocker says why not)."""
    for name, text in info.plan.received:
        at_module = name == MODULE_LEVEL  # a script training at its top level: a module-level name
        owner, _, method = name.partition(".")
        top: Any = next(
            (d for d in module.body if isinstance(d, (cst.FunctionDef, cst.ClassDef)) and d.name.value == owner), None
        )
        func: Any = (init_method(top) if method else top) if isinstance(top, cst.ClassDef) == bool(method) else None
        body = list(func.body.body) if func is not None and isinstance(func.body, cst.IndentedBlock) else []
        if at_module:
            body = list(module.body)
        found = [
            line.body[0]
            for line in body
            if isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(line.body[0], cst.Assign)
            and isinstance(line.body[0].value, cst.Call)
            and code_of(line.body[0].value.func) == text
        ]
        calls = [n for n in walk(func) if isinstance(n, cst.Call) and code_of(n.func) == text] if func else []
        if at_module:
            calls = [
                n for n in walk(module)
                if isinstance(n, cst.Call) and code_of(n.func) == text and enclosing_function(rule.parents, n) is None
            ]
        assign = found[0] if len(found) == 1 and len(calls) == 1 else None
        target = assign.targets[0].target if assign is not None and len(assign.targets) == 1 else None
        if (func is None and not at_module) or not isinstance(target, (cst.Tuple, cst.List)) or any(
            isinstance(e, cst.StarredElement) for e in target.elements
        ):
            where = "the module's top level" if at_module else f"{name}() itself"
            info.received_refusal = (
                f"what {text}() returns is not unpacked into names by one statement of {where}, "
                "so the GradScaler it would return cannot be unpacked with it"
            )
            info.blockers.append(Blocker(calls[0] if calls else (func or module), info.received_refusal))
            continue
        info.received[func] = cast(cst.Assign, assign)
        if method:
            # a class's __init__: kept on self for the methods that scale, as a class whose
            # __init__ initializes keeps it (``_check_remote_layout`` reaches them so)
            info.storage, info.received_class = "self", cast(cst.ClassDef, top)
            info.access[func] = f"{self_name(func)}.{info.scaler_name}"
        else:
            info.access[func] = info.scaler_name


def _framework_sites(rule, module: cst.Module, info: AmpFile) -> None:
    """The plan's framework route: methods of hooks/runners that read the GradScaler from the
    runner (``runner.grad_scaler``), and in the launcher the runner builds it is put on, each
    given the optimizer the initialize returns (else a blocker)."""
    plan = info.plan
    carried = {(cls, method): access for cls, method, access in plan.carried}
    heirs = set(plan.heir_methods)
    built = set(plan.built_methods)
    bound = set(plan.bound_functions)
    held = set(plan.held_methods)
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef):
            for method in methods_of(stmt):
                access = carried.get((stmt.name.value, method.name.value))
                if access is not None and class_of_method(rule.parents, method) is stmt:
                    info.carried_functions.add(method)
                    info.access[method] = access
        elif isinstance(stmt, cst.FunctionDef) and stmt.name.value in bound and stmt.params.params:
            # bound as a method of the object carrying the GradScaler (``bound_plan``)
            info.carried_functions.add(stmt)
            info.access[stmt] = f"{stmt.params.params[0].name.value}.{CARRIER_ATTRIBUTE}"
    for site in info.scale_losses:
        if site.func not in info.carried_functions:
            continue
        if site.func.name.value in bound and class_of_method(rule.parents, site.func) is None:
            params = site.func.params.params
            if len(params) < 2 or code_of(site.loss) != params[1].name.value:
                info.blockers.append(Blocker(
                    site.with_stmt, f"{site.func.name.value}() is bound as a method whose caller puts the forward "
                    "pass under autocast, but this amp.scale_loss does not scale the loss it is handed"
                ))
            continue
        # the GradScaler on the runner steps the optimizer the runner carries (the one the
        # launcher's initialize returned); an inherited one, the optimizer the base initialized
        cls = class_of_method(rule.parents, site.func)
        inherited = cls is not None and (cls.name.value, site.func.name.value) in heirs  # type: ignore[union-attr]
        attr = plan.heir_optimizer if inherited else "optimizer"
        carried_optimizer = info.access[site.func].rsplit(".", 1)[0] + "." + attr
        handed = [code_of(o) for o in site.optimizers]
        key = (cls.name.value, site.func.name.value) if cls is not None else None  # type: ignore[union-attr]
        if key in held or key in built:
            # the held-optimizer route proved the object is the one whose optimizers apex
            # initialized (any optimizer it keeps is one of them); an object built by the
            # launcher keeps the optimizer its one initialize returned, handed to the constructor
            receiver = info.access[site.func].rsplit(".", 1)[0]
            role = "holds" if key in held else "carries"
            if len(handed) != 1 or handed[0].rsplit(".", 1)[0] != receiver:
                info.blockers.append(
                    Blocker(site.with_stmt, f"this amp.scale_loss is given {', '.join(handed) or 'no optimizer'}, "
                            f"not an optimizer kept on {receiver}, the object that {role} the GradScaler")
                )
            continue
        if handed != [carried_optimizer]:
            holder = "the base class keeps" if inherited else "the runner carries"
            info.blockers.append(
                Blocker(site.with_stmt, f"this amp.scale_loss is given {', '.join(handed) or 'no optimizer'}, "
                        f"not {carried_optimizer}, whose GradScaler {holder}")
            )
        elif key is not None and key in {(c, m) for c, m, _w in plan.runner_step_autocast}:
            test, why = scale_guard(rule.parents, site.func, site.with_stmt)
            if test is None and why:
                info.blockers.append(Blocker(site.with_stmt, (
                    "the runner the hook reads the GradScaler from may carry none (a plain runner), so its steps "
                    f"must take the scaled backward's test, but {why}")))
            elif test is not None:
                info.scaler_guards[site.func] = test
    if plan.object_builds:
        _object_builds(rule, module, info)
    if not plan.runner_builds:
        return
    optimizers = {code_of(o) for init in info.training_inits for o in init.optimizers}
    for owner, target, line in plan.runner_builds:
        func = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == owner), None)
        found = None
        for node in walk(func) if func is not None else ():
            if isinstance(node, cst.SimpleStatementLine) and rule.line_of(node) <= line:
                assign = node.body[0] if len(node.body) == 1 else None
                if isinstance(assign, cst.Assign) and code_of(assign.targets[0].target) == target:
                    found = (node, assign)
        if found is None:
            continue
        node, assign = found
        given = arg_value(assign.value, 99, "default_args") if isinstance(assign.value, cst.Call) else None
        optimizer = arg_value(given, 99, "optimizer") if isinstance(given, cst.Call) else None
        if given is None and isinstance(assign.value, cst.Call):  # Runner(model, optimizer=...)
            optimizer = arg_value(assign.value, 99, "optimizer")
        if optimizer is None or code_of(optimizer) not in optimizers:
            info.blockers.append(
                Blocker(node, f"the runner built here is not given the optimizer amp.initialize returns "
                        f"({', '.join(sorted(optimizers))}): the GradScaler it would carry steps another one")
            )
            continue
        info.carriers[node] = target
        info.needs.append(Need(node, "carry_scaler", func))


def _object_builds(rule, module: cst.Module, info: AmpFile) -> None:
    """The plan's built-object route in the launcher: the object built at each build
    (``self._trainer = (A if c else B)(model, data, optimizer)``) carries the GradScaler to the
    methods of its class; it must be handed the optimizer the initialize returns."""
    optimizers = {code_of(o) for init in info.training_inits for o in init.optimizers}
    home = enclosing(rule.parents, info.training_inits[0].call, cst.FunctionDef) if info.training_inits else None
    for _owner, target, _line in info.plan.object_builds:  # type: ignore[union-attr]
        # the lines of a file the earlier passes edited have moved: the one call assigned to
        # the target in the initializing function is the build (the plan found one)
        found = [
            (node, node.body[0])
            for node in (walk(home) if home is not None else ())
            if isinstance(node, cst.SimpleStatementLine)
            and len(node.body) == 1
            and isinstance(node.body[0], cst.Assign)
            and isinstance(node.body[0].value, cst.Call)
            and code_of(node.body[0].targets[0].target) == target
        ]
        if len(found) != 1:
            continue
        node, assign = found[0]
        given = {code_of(a.value) for a in assign.value.args}  # type: ignore[union-attr]
        if not given & optimizers:
            info.blockers.append(
                Blocker(node, f"the object built here is not given the optimizer amp.initialize returns "
                        f"({', '.join(sorted(optimizers))}): the GradScaler it would carry steps another one")
            )
            continue
        func = enclosing(rule.parents, node, cst.FunctionDef)
        info.carriers[node] = target
        info.object_carriers.add(node)
        info.needs.append(Need(node, "carry_scaler", func))


def _loss_calls(rule, module: cst.Module, info: AmpFile) -> None:
    """The plan's ``loss_methods``: an instance of a class of another file whose method
    scales the loss it is handed (``self.fp_optimizer = AMPOptimizer(...)``, then
    ``self.fp_optimizer.step(loss, ...)``) is kept on ``self`` (every use of that attribute
    in the file must be in a method of the class that built it) or in a local name of the
    function that built it; each call of the method is a need (``loss_call``): autocast goes
    around the forward pass before it.  A use as a value (passed on, returned) is a blocker:
    the losses handed over could not be followed."""
    wanted = {text: (method, position, name) for text, method, position, name in info.plan.loss_methods}
    parents = rule.parents
    for call in list(info.passes):
        if code_of(call.func) not in wanted:
            continue
        method, position, name = wanted[code_of(call.func)]
        holder = parents.get(call)
        func = enclosing_function(parents, call)
        cls = class_of_method(parents, func)
        target = holder.targets[0].target if isinstance(holder, cst.Assign) and len(holder.targets) == 1 else None
        uses: List[Any] = []
        if (
            cls is not None
            and isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == self_name(func)
        ):
            for node in walk(module):
                if not (isinstance(node, cst.Attribute) and node.attr.value == target.attr.value):
                    continue
                where = enclosing_function(parents, node)
                if class_of_method(parents, where) is not cls or code_of(node.value) != self_name(where):
                    info.blockers.append(
                        Blocker(node, f"{code_of(node)} is used outside class {cls.name.value}: the losses handed "
                                f"to its {method}() cannot be followed")
                    )
                    continue
                uses.append(node)
        elif func is not None and isinstance(target, cst.Name):
            uses = [
                n
                for n in walk(func)
                if isinstance(n, cst.Name) and n.value == target.value and not _is_member_name(parents, n)
            ]
            if any(isinstance(n, (cst.Global, cst.Nonlocal)) for n in walk(func)):
                uses = [None]
        else:
            uses = [None]
        if None in uses:
            info.blockers.append(
                Blocker(call, f"the {code_of(call.func)} instance is kept neither on self nor in a local name: "
                        f"the losses its {method}() is handed cannot be followed to put autocast around their "
                        "forward passes")
            )
            continue
        for node in uses:
            user = parents.get(node)
            if isinstance(user, cst.AssignTarget) or (
                isinstance(user, cst.Attribute) and user.value is node and user.attr.value != method
            ):
                continue
            if isinstance(user, cst.Attribute) and user.value is node and isinstance(parents.get(user), cst.Call):
                loss_call = parents[user]
                positional = [a for a in loss_call.args if a.keyword is None and not a.star]
                keywords = {a.keyword.value: a for a in loss_call.args if a.keyword is not None}
                if name in keywords or position < len(positional):
                    info.needs.append(Need(loss_call, "loss_call", enclosing_function(parents, loss_call)))
                    continue
                info.blockers.append(Blocker(loss_call, f"{code_of(loss_call.func)}() is not handed a loss here"))
            else:
                info.blockers.append(
                    Blocker(node, f"{code_of(node)} is used as a value: the losses handed to its {method}() "
                            "cannot be followed")
                )


def _stepped_calls(rule, info: AmpFile) -> None:
    """The plan's ``stepped_calls`` (``_amp_caller_steps``): each call of another file's
    backward helper hands it the loss, whose forward pass gets autocast here (a
    ``loss_call`` need), and is followed by the step of the optimizer it hands it, which goes
    through the GradScaler (a ``step`` need); a call where that is not proven is a blocker."""
    wanted = {entry[0]: entry for entry in info.plan.stepped_calls}
    for call in list(info.passes):
        entry = wanted.get(code_of(call.func))
        if entry is None:
            continue
        _text, helper, loss_at, loss_name, optimizer_at, optimizer_name = entry
        func = enclosing_function(rule.parents, call)
        words = ROUTE.format(helper=helper, where="another file", caller="this call")
        optimizer = arg_value(call, optimizer_at if optimizer_at >= 0 else len(call.args) + 1, optimizer_name)
        if arg_value(call, loss_at, loss_name) is None or not isinstance(optimizer, (cst.Name, cst.Attribute)):
            info.blockers.append(Blocker(call, words + (
                f"{code_of(call).strip()} does not hand it its loss and an optimizer by name: the step after it "
                "cannot be followed")))
            continue
        found = launcher_step(rule, call, code_of(optimizer))
        if isinstance(found, str):
            info.blockers.append(Blocker(call, words + found))
            continue
        step = found[0]
        info.caller_steps[step] = (call, found)
        info.needs.append(Need(call, "loss_call", func))
        info.needs.append(Need(step, "step", func))


def loss_of_call(info: AmpFile, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The loss a ``loss_call`` need hands over (by position or by the parameter's name)."""
    for text, _helper, position, name, _o, _n in info.plan.stepped_calls if info.plan is not None else ():
        if code_of(call.func) == text:
            return arg_value(call, position, name)
    for _text, method, position, name in info.plan.loss_methods if info.plan is not None else ():
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == method):
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg.value
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position].value
    return None


def availability_check(parents, node: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, bool]]:
    """``amp is None`` -> (that comparison, False), ``amp is not None`` -> True, ``not amp``
    -> False, ``amp`` used as a condition -> True (the import never fails any more)."""
    parent = parents.get(node)
    if isinstance(parent, cst.Comparison) and parent.left is node and len(parent.comparisons) == 1:
        target = parent.comparisons[0]
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
            if isinstance(target.operator, cst.Is):
                return parent, False
            if isinstance(target.operator, cst.IsNot):
                return parent, True
        return None
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return parent, False
    if isinstance(parent, cst.BooleanOperation) or (
        isinstance(parent, (cst.If, cst.While, cst.Assert, cst.IfExp)) and parent.test is node
    ):
        return node, True
    return None


def _member_probe(parents, node: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, bool]]:
    """``"state_dict" in amp.__dict__`` (timm's ApexScaler): whether apex.amp has a member the
    rules migrate -> (that comparison, True); ``not in`` -> False."""
    target = parents.get(node)
    parent = parents.get(target)
    if not (isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1):
        return None
    if parent.comparisons[0] is not target or not isinstance(target.operator, (cst.In, cst.NotIn)):
        return None
    if string_value(parent.left) not in HANDLED_MEMBERS:
        return None
    return parent, isinstance(target.operator, cst.In)


def _init_site(rule, call: cst.Call, old_api: bool, info: AmpFile) -> Optional[InitSite]:
    parents = rule.parents
    holder = parents.get(call)
    stmt = parents.get(holder) if holder is not None else None
    handle = None
    if isinstance(holder, cst.Expr) and isinstance(stmt, cst.SimpleStatementLine):
        pass
    elif (
        isinstance(holder, cst.Assign)
        and holder.value is call
        and isinstance(stmt, cst.SimpleStatementLine)
        and len(holder.targets) == 1
    ):
        if old_api:
            target = holder.targets[0].target
            if not isinstance(target, (cst.Name, cst.Attribute)):
                info.blockers.append(Blocker(call, "amp.init() result is unpacked; cannot follow the handle"))
                return None
            handle = code_of(target)
    else:
        info.blockers.append(
            Blocker(call, "amp.initialize is used inside an expression; rewrite it as a statement first")
        )
        return None
    if len(stmt.body) != 1:
        info.blockers.append(Blocker(call, "amp.initialize shares its line with other statements"))
        return None
    options = _options_mapping(call, old_api)
    if isinstance(options, str):
        info.blockers.append(Blocker(call, options))
        return None
    guards: List[cst.BaseExpression] = []
    anchor: cst.BaseStatement = stmt
    cur: cst.CSTNode = stmt
    while True:
        block = parents.get(cur)
        owner = parents.get(block) if block is not None else None
        loop, refused = setup_loop(parents, block, call)
        if refused:
            info.blockers.append(Blocker(call, refused))
            return None
        if loop is not None:
            anchor = cur = loop
            continue
        if exiting_try(owner, block) or initialize_only_try(owner, block):
            anchor = cur = owner  # past the try the initialize ran: the scaler goes after it
            continue
        if isinstance(owner, cst.If) and owner.body is block and not is_main_guard(parents, owner):
            guards.insert(0, owner.test)
            anchor = owner
            cur = owner
            # an `elif` is an If inside the orelse of another If: the scaler goes after the
            # whole chain, which is the statement in the block
            if isinstance(parents.get(owner), cst.If):
                while isinstance(parents.get(anchor), cst.If):
                    anchor = parents[anchor]
                break
            continue
        break
    site = InitSite(call, stmt, anchor, guards, enclosing_function(parents, call), old_api=old_api, handle=handle)
    site.options = options
    if not old_api:
        site.models = elements(arg_value(call, 0, "models"))
        opts = arg_value(call, 1, "optimizers")
        # ``None`` or an empty list/tuple (``amp.initialize(model, [], opt_level="O3")``): inference
        site.has_optimizers = (
            opts is not None
            and not (isinstance(opts, cst.Name) and opts.value == "None")
            and not (isinstance(opts, (cst.List, cst.Tuple)) and not opts.elements)
            and not (isinstance(opts, cst.Name) and proven_none(parents, call, opts.value))  # ``if opt is None:``
        )
        site.optimizers = elements(opts) if site.has_optimizers else []
        if not site.models:
            info.blockers.append(Blocker(call, "amp.initialize without models"))
            return None
    return site


def _options_mapping(call: cst.Call, old_api: bool) -> Union[None, str, cst.BaseExpression]:
    """The ``cfg`` of ``amp.initialize(model, optimizer, **cfg)``, whose options (opt level,
    loss scale, ...) are only known at run time; None when every option is written out; a
    reason (str) when the options cannot be followed: ``*args``, ``**`` beside options
    written out (or beside a third positional one), or the old ``amp.init``."""
    stars = [a for a in call.args if a.star]
    if not stars:
        return None
    if old_api or any(a.star == "*" for a in stars) or len(stars) != 1:
        return "amp.initialize gets its arguments from *args/**kwargs; the opt level is unknown"
    positional, keywords = call_args(call)
    if len(positional) > 2 or set(keywords) - {"models", "optimizers"}:
        return f"amp.initialize takes options both from **{code_of(stars[0].value)} and written out"
    return stars[0].value


def _scale_loss_site(rule, call: cst.Call, info: AmpFile) -> Optional[ScaleLossSite]:
    parents = rule.parents
    item = parents.get(call)
    with_stmt = parents.get(item) if item is not None else None
    if not (isinstance(item, cst.WithItem) and isinstance(with_stmt, cst.With)):
        info.blockers.append(Blocker(call, "amp.scale_loss is used outside a with statement"))
        return None
    if len(with_stmt.items) != 1 or with_stmt.asynchronous is not None:
        info.blockers.append(Blocker(with_stmt, "amp.scale_loss shares its with statement with other context managers"))
        return None
    if any(a.star for a in call.args):
        info.blockers.append(Blocker(call, "amp.scale_loss gets its arguments from *args/**kwargs"))
        return None
    loss = arg_value(call, 0, "loss")
    opts = arg_value(call, 1, "optimizers")
    if loss is None or opts is None:
        info.blockers.append(Blocker(call, "amp.scale_loss without a loss and optimizer(s)"))
        return None
    as_name = None
    if item.asname is None:
        info.blockers.append(Blocker(with_stmt, "amp.scale_loss without `as`: the scaled loss is never used"))
        return None
    if item.asname is not None:
        if not isinstance(item.asname.name, cst.Name):
            info.blockers.append(Blocker(call, "amp.scale_loss result is unpacked"))
            return None
        as_name = item.asname.name.value
    site = ScaleLossSite(with_stmt, call, enclosing_function(parents, call), loss, elements(opts), as_name)
    _through_wrappers(rule, site, info)
    _through_handed_wrappers(rule, site, info)
    through_held(rule, site, info)
    return site


def _through_wrappers(rule, site: ScaleLossSite, info: AmpFile) -> None:
    """An optimizer the function never steps itself but steps through the proven wrapper
    that holds it (``_amp_wrapper``) is replaced in ``site.optimizers`` by that wrapper: the
    GradScaler unscales and steps the wrapper."""
    wrappers = dict(info.plan.optimizer_wrappers) if info.plan is not None else {}
    if not wrappers or site.func is None:
        return
    for index, opt in enumerate(site.optimizers):
        if not isinstance(opt, cst.Attribute) or find_steps(rule, site, code_of(opt)):
            continue
        holder, wrapper = wrapper_holder(rule, site.func, opt, wrappers)
        if holder is not None and find_steps(rule, site, holder):
            site.optimizers[index] = opt.value
            site.wrapped[holder] = (code_of(opt), wrapper)


def _through_handed_wrappers(rule, site: ScaleLossSite, info: AmpFile) -> None:
    """An optimizer the function never steps itself but steps through a wrapper of another
    file whose step can be handed the GradScaler (``_amp_handed_wrapper``): recorded in
    ``site.handed``, so ``find_steps`` finds the wrapper's step."""
    plan = info.plan
    if plan is None or not plan.scaler_steppable or site.func is None:
        return
    wrappers = {local: attr for local, attr, _path, _cls in plan.scaler_steppable}
    defined = {local: (path, cls) for local, _attr, path, cls in plan.scaler_steppable}
    entries = tuple(plan.entries) + tuple(plan.optional_entries)
    for opt in site.optimizers:
        if not isinstance(opt, (cst.Name, cst.Attribute)) or code_of(opt) in site.wrapped:
            continue
        if find_steps(rule, site, code_of(opt)):
            continue
        found = steppable_holder(rule, site, opt, wrappers, entries)
        if found is not None:
            site.handed[code_of(opt)] = (found[0], found[1]) + defined[found[1]]


def _amp_state_use(rule, ref: AmpRef, info: AmpFile) -> None:
    """``amp._amp_state.loss_scalers[0].loss_scale()`` (read), ``amp._amp_state.loss_scalers[0]._loss_scale
    = x`` / ``._scale_seq_len = n`` (settings that map to GradScaler arguments; ``_max_loss_scale``
    / ``_min_loss_scale``, which have none, are dropped with a warning) and the same through a
    local alias (DLE-GNMT: ``loss_scaler = amp._amp_state.loss_scalers[0]`` then
    ``loss_scaler._loss_scale = loss_scale``; reads of the scale too), a read in place by a loss
    id that is no number (``loss_scalers[loss_id].loss_scale()``: the same index into the list
    of GradScalers, checked with the other reads) and a loop over all of them whose variable
    only reads the scale are known; anything else is reported."""
    parents = rule.parents
    chain = parents.get(ref.expr)
    ok = (
        isinstance(chain, cst.Attribute)
        and chain.attr.value == "loss_scalers"
        and isinstance(parents.get(chain), cst.Subscript)
    )
    loss_id = None
    if ok:
        sub = parents[chain]
        loss_id = _loss_scaler_alias(parents, chain)[1]
    if loss_id is not None and _scaler_use(rule, sub, info, loss_id):
        return
    if loss_id is not None and _scaler_alias(rule, sub, info, loss_id):
        return
    if not ok and _scaler_loop(rule, chain, info):
        return
    if ok and loss_id is None and _read_by_index(rule, sub, chain, info):
        return
    gate = probe_gate(parents, rule.tree, ref.expr, info.refs, info.plan)
    if gate is not None:
        info.probe_gates.append(gate)
        return
    info.blockers.append(Blocker(ref.expr, _amp_state_refusal(rule, ref)))


def _read_by_index(rule, sub: cst.Subscript, chain: Any, info: AmpFile) -> bool:
    """``amp._amp_state.loss_scalers[loss_id].loss_scale()`` (or ``._loss_scale``) read in
    place, ``loss_id`` no number: recorded as a read whose loss id is that code.  Indexing the
    list of GradScalers, as long as apex's list, with the same value picks the same loss id's
    scaler (and raises the same IndexError); ``_check_scale_reads`` keeps the shim where
    there is no such list."""
    code = _loss_id_code(sub, chain)
    if code is None:
        return False
    found = AmpFile()
    if not _scaler_use(rule, sub, found, 0) or any(n.kind != "get_scale" for n in found.needs):
        return False
    for need in found.needs:
        need.loss_id = code  # type: ignore[assignment]
    info.needs.extend(found.needs)
    return True


def _scaler_loop(rule, chain: Any, info: AmpFile) -> bool:
    """``for s in amp._amp_state.loss_scalers:`` (or ``enumerate(...)`` of it, also as the
    first ``for`` of a comprehension) where every other use of ``s`` in its function is a
    read of its scale inside the loop: apex's list of loss scalers, one per loss id, is
    natively the list of GradScalers (``[scaler]`` where apex kept one), and each read
    ``s.get_scale()``.  Recorded as a need of kind ``scaler_list`` (the list) and one of kind
    ``each_scale`` per read (``via`` the list); the count is checked with the other reads."""
    parents = rule.parents
    if not (isinstance(chain, cst.Attribute) and chain.attr.value == "loss_scalers"):
        return False
    iterated, holder = chain, parents.get(chain)
    counted = False
    if isinstance(holder, cst.Arg):
        call = parents.get(holder)
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value == "enumerate"
            and list(call.args) == [holder]
            and holder.keyword is None
            and not holder.star
        ):
            return False
        iterated, holder, counted = call, parents.get(call), True
    if not (isinstance(holder, (cst.For, cst.CompFor)) and holder.iter is iterated):
        return False
    target = holder.target
    if counted:
        elements = target.elements if isinstance(target, cst.Tuple) else ()
        if len(elements) != 2 or not isinstance(elements[1].value, cst.Name):
            return False
        target = elements[1].value
    if not isinstance(target, cst.Name):
        return False
    func = enclosing(parents, holder, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    if isinstance(func, (cst.Lambda, cst.ClassDef)):
        return False
    # a for statement's name lives on in its function; a comprehension's only inside it
    loop = holder.body if isinstance(holder, cst.For) else parents.get(holder)
    scope = loop if isinstance(holder, cst.CompFor) else func if func is not None else rule.tree
    within = {id(n) for n in walk(loop)}
    uses = [
        n
        for n in walk(scope)
        if isinstance(n, cst.Name)
        and n.value == target.value
        and n is not target
        and not _is_member_name(parents, n)
        and not (isinstance(holder, cst.For) and _comprehension_binds(parents, n))
    ]
    if not uses or any(id(n) not in within for n in uses):
        return False
    found = AmpFile()
    if not all(_scaler_use(rule, use, found) for use in uses) or any(n.kind != "get_scale" for n in found.needs):
        return False
    function = enclosing_function(parents, chain)
    if any(n.func is not function for n in found.needs):
        return False  # a read in a nested function
    info.needs.append(Need(chain, "scaler_list", function))
    for need in found.needs:
        info.needs.append(Need(need.node, "each_scale", function, via=chain))
    return True


def _probed_attribute(parents: Any, chain: Any) -> Optional[str]:
    """``'loss_scalers'`` of ``hasattr(amp._amp_state, "loss_scalers")`` (cvpods'
    ``is_amp_training()``): the attribute a ``hasattr`` asks apex's state for, as written; None
    for any other use."""
    arg = parents.get(chain)
    call = parents.get(arg)
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and code_of(call.func) == "hasattr"):
        return None
    if len(call.args) != 2 or call.args[0] is not arg or not isinstance(call.args[1].value, cst.SimpleString):
        return None
    return code_of(call.args[1].value)


def _amp_state_refusal(rule, ref: AmpRef) -> str:
    """Why a use of ``amp._amp_state`` stays (for the finding): what it reads of apex's loss
    scalers when that is their scale or their overflow flag, and why no GradScaler stands for
    it there: a loop over all of them (DeepPrivacy logs ``{i: s._loss_scale for i, s in
    enumerate(amp._amp_state.loss_scalers)}``), a loss id that is no number, the scaler kept in
    a local; else that it has no native equivalent."""
    parents = rule.parents
    chain = parents.get(ref.expr)
    where: Any = chain
    while where is not None and not isinstance(where, (cst.SimpleStatementLine, cst.For, cst.While, cst.If)):
        where = parents.get(where)
    read = _scaler_reads(where)
    alias, index = _loss_scaler_alias(parents, chain)
    internals: List[str] = []
    if alias is not None:
        func = enclosing(parents, chain, (cst.FunctionDef,))
        read |= _scaler_reads(func, alias)
        internals = _scaler_internals(func, alias)
    if isinstance(chain, cst.Attribute) and chain.attr.value == "opt_properties":
        option = parents.get(chain)
        named = option.attr.value if isinstance(option, cst.Attribute) and option.value is chain else ""
        what = f"the opt_level's {named} (opt_properties.{named})" if named else "the opt_level's properties"
        return (
            f"private amp._amp_state use: it reads {what}, which neither a GradScaler nor torch.autocast has "
            "(natively no fp32 master weights are kept beside the model's)"
        )
    if internals and index is not None:
        return (
            f"private amp._amp_state use: it keeps apex's loss scaler {index} in {alias} and uses what a GradScaler "
            f"has no public counterpart of: {', '.join(internals)} (apex's own overflow buffer and scale update)"
        )
    probed = _probed_attribute(parents, ref.expr)
    if probed is not None:
        return (
            f"private amp._amp_state use: it asks whether amp.initialize has run (hasattr of {probed} on "
            "apex's global state, true from the first initialize on, wherever it ran), which neither a GradScaler "
            "nor torch.autocast tells (torch.is_autocast_enabled() is true only inside an autocast region)"
        )
    if not (isinstance(chain, cst.Attribute) and chain.attr.value == "loss_scalers") or not read:
        return "private amp._amp_state use has no native equivalent"
    if "_has_overflow" in read:
        return (
            "private amp._amp_state use: it reads whether one of apex's loss scalers (one per loss id) found an "
            "overflow in the last backward (_has_overflow, set where the amp.scale_loss block exited, before the "
            "step it skips), which a GradScaler keeps private: it finds the inf/nan in scaler.unscale_() or "
            "scaler.step() and shows it only as the lower scale scaler.update() leaves"
        )
    sub = parents.get(chain)
    loss_id = _loss_id_code(sub, chain)
    if loss_id is None:
        return (
            "private amp._amp_state use: it reads the current scale of every one of apex's loss scalers (one per "
            "loss id), going over amp._amp_state.loss_scalers; natively each is the get_scale() of its loss id's "
            "GradScaler, but only a loop or comprehension over them whose variable is used for nothing but reading "
            "its scale goes over the GradScalers, and this is none"
        )
    if index is None:
        func = enclosing(parents, chain, (cst.FunctionDef,))
        params = {p.name.value for p in func.params.params} if isinstance(func, cst.FunctionDef) else set()
        given = f" (a parameter of {func.name.value}())" if loss_id in params else ""
        return (
            f"private amp._amp_state use: it reads the current scale of apex's loss scaler for the loss id "
            f"{loss_id}{given}, which is no number: which GradScaler (one per loss id) holds that scale natively "
            "is not told here"
        )
    kept = f", kept in {alias}" if alias is not None else ""
    return (
        f"private amp._amp_state use: it reads the current scale of apex's loss scaler {index} (one per loss id)"
        f"{kept}, what GradScaler.get_scale() gives natively, but only a read in place, "
        f"amp._amp_state.loss_scalers[{index}].loss_scale() or ._loss_scale, is rewritten to it"
    )


def _is_read(parents, node: cst.BaseExpression) -> bool:
    """Whether ``node`` is only read where it stands: no target (or part of one) of an
    assignment, an augmented assignment, a ``del``, a ``for`` or a ``with ... as``."""
    child, parent = node, parents.get(node)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, (cst.AssignTarget, cst.Del, cst.AsName)):
        return False
    return not (isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and parent.target is child)


def _loss_id_code(sub: Any, chain: Any) -> Optional[str]:
    """The code of ``i`` in ``<amp state>.loss_scalers[i]`` (None where ``loss_scalers`` is
    not subscripted so)."""
    if not isinstance(sub, cst.Subscript) or sub.value is not chain or len(sub.slice) != 1:
        return None
    index = sub.slice[0].slice
    return code_of(index.value) if isinstance(index, cst.Index) else None


def _scaler_reads(node: Any, alias: Optional[str] = None) -> Set[str]:
    """The loss scaler attributes apex code reads under ``node`` that have a meaning
    natively (its scale, its overflow flag): on anything, or only on the name ``alias``."""
    read = set()
    for found in walk(node) if node is not None else []:
        if isinstance(found, cst.Attribute) and found.attr.value in ("_loss_scale", "loss_scale", "_has_overflow"):
            if alias is None or (isinstance(found.value, cst.Name) and found.value.value == alias):
                read.add(found.attr.value)
    return read


def _comprehension_binds(parents, name: cst.Name) -> bool:
    """Whether a comprehension around ``name`` binds it in one of its ``for`` targets (the
    name there is the comprehension's own, not the function's)."""
    node = parents.get(name)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            fors = [n for n in walk(node.for_in) if isinstance(n, cst.CompFor)]
            if any(name.value in {n.value for n in walk(f.target) if isinstance(n, cst.Name)} for f in fors):
                return True
        node = parents.get(node)
    return False


def _scaler_internals(func: Any, alias: str) -> List[str]:
    """What code reads, calls or sets on the local ``alias`` of apex's loss scaler beyond its
    scale and the settings a GradScaler takes (``update_scale()``, ``_overflow_buf``), in
    order of first use."""
    known = {"_loss_scale", "loss_scale", "_has_overflow", *AMP_STATE_SETTINGS, *AMP_STATE_DROPPED}
    nodes = list(walk(func)) if func is not None else []
    called = {id(n.func) for n in nodes if isinstance(n, cst.Call)}
    found: List[str] = []
    for node in nodes:
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == alias:
            name = node.attr.value + ("()" if id(node) in called else "")
            if node.attr.value not in known and name not in found:
                found.append(name)
    return found


def _loss_scaler_alias(parents, chain: Any) -> Tuple[Optional[str], Optional[int]]:
    """``name = <amp state>.loss_scalers[i]`` as a statement: ``name`` (None for another
    use), and ``i`` when it is a number."""
    sub = parents.get(chain)
    if not isinstance(sub, cst.Subscript) or sub.value is not chain or len(sub.slice) != 1:
        return None, None
    index = sub.slice[0].slice
    number = (
        int(index.value.value) if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) else None
    )
    assign = parents.get(sub)
    if (
        isinstance(assign, cst.Assign)
        and assign.value is sub
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return assign.targets[0].target.value, number
    return None, number


def _scaler_use(rule, scaler: cst.BaseExpression, info: AmpFile, loss_id: int = 0) -> bool:
    """``<scaler>.loss_scale()`` or ``<scaler>._loss_scale = x`` (a statement of its own),
    ``scaler`` denoting apex's loss scaler ``loss_id``: recorded as a need."""
    parents = rule.parents
    attr = parents.get(scaler)
    if not (isinstance(attr, cst.Attribute) and attr.value is scaler):
        return False
    if attr.attr.value == AMP_STATE_SCALE_READ:
        call = parents.get(attr)
        if isinstance(call, cst.Call) and call.func is attr and not call.args:
            info.needs.append(Need(call, "get_scale", enclosing_function(parents, call), loss_id))
            return True
        return False
    if attr.attr.value == "_loss_scale" and _is_read(parents, attr):
        # what loss_scale() returns: apex's LossScaler keeps its current scale there
        info.needs.append(Need(attr, "get_scale", enclosing_function(parents, attr), loss_id))
        return True
    if attr.attr.value not in AMP_STATE_SETTINGS and attr.attr.value not in AMP_STATE_DROPPED:
        return False
    target = parents.get(attr)
    assign = parents.get(target)
    stmt = parents.get(assign) if assign is not None else None
    if (
        isinstance(target, cst.AssignTarget)
        and isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
    ):
        info.needs.append(Need(stmt, "scaler_setting", enclosing_function(parents, stmt), loss_id))
        return True
    return False


def _scaler_alias(rule, sub: cst.Subscript, info: AmpFile, loss_id: int = 0) -> bool:
    """``name = amp._amp_state.loss_scalers[loss_id]`` as a statement of its own in a function,
    where every other use of ``name`` in that function, after it, is a known use of the scaler
    (a setting, or a read of its scale: apex's loss scaler is one object for the whole run, so
    a read through the alias sees the scale of that moment, as ``get_scale()`` does) and the
    function assigns ``name`` nowhere else: the statement is recorded as a need of kind
    ``scaler_alias``, each use as its own need."""
    parents = rule.parents
    stmt = lone_assignment(parents, sub)
    if stmt is None:
        return False
    assign = parents[sub]
    func = enclosing(parents, stmt, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    name = assign.targets[0].target.value
    if not isinstance(func, cst.FunctionDef):
        return False
    uses = [
        n
        for n in walk(func)
        if isinstance(n, cst.Name)
        and n.value == name
        and n is not assign.targets[0].target
        and not _is_member_name(parents, n)
    ]
    if any(isinstance(n, (cst.Global, cst.Nonlocal)) for n in walk(func)):
        return False
    if any(p.name.value == name for p in list(func.params.params) + list(func.params.kwonly_params)):
        return False
    found = AmpFile()
    if not all(_scaler_use(rule, use, found, loss_id) for use in uses):
        return False
    if any(n.func is not func for n in found.needs):
        return False  # a use in a nested function
    if any(rule.line_of(need.node) < rule.line_of(stmt) for need in found.needs):
        return False
    info.needs.append(Need(stmt, "scaler_alias", func))
    for need in found.needs:
        need.via = stmt if need.kind == "get_scale" else None
    info.needs.extend(found.needs)
    return True


def _old_api_uses(rule, module: cst.Module, handles: Dict[str, InitSite], info: AmpFile) -> None:
    """``handle = amp.init(...)``: ``with handle.scale_loss(loss, opt) as s:`` is a
    scale_loss site; any other use of the handle is a blocker."""
    if not handles:
        return
    parents = rule.parents
    for node in walk(module):
        if not isinstance(node, (cst.Name, cst.Attribute)) or code_of(node) not in handles:
            continue
        parent = parents.get(node)
        if isinstance(parent, cst.Attribute) and parent.value is node and code_of(parent) in handles:
            continue  # `self.handle`: the Name `self` inside it is not the handle
        if isinstance(parent, cst.AssignTarget):
            continue
        if isinstance(parent, cst.Attribute) and parent.attr.value == "scale_loss":
            call = parents.get(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                site = _scale_loss_site(rule, call, info)
                if site is not None:
                    info.scale_losses.append(site)
                continue
        if isinstance(node, cst.Attribute) and isinstance(parent, cst.Attribute) and parent.value is node:
            info.blockers.append(Blocker(node, f"the old amp handle {code_of(node)} is used for {parent.attr.value}"))
        elif isinstance(node, cst.Name) and not (isinstance(parent, cst.Attribute) and parent.attr is node):
            info.blockers.append(Blocker(node, f"the old amp handle {node.value} is used for more than scale_loss"))


def _handed_where(rule: Any, expr: Any) -> Optional[str]:
    """Where ``expr`` (apex.amp itself, passed on as a value) goes, as a clause: ``to
    criterion() in train()`` for an argument of a call, ``in a dict in train()`` for a value
    of a dict display; None for any other place (no line numbers: the text must read the
    same on a second run)."""
    parents = rule.parents
    func = enclosing_function(parents, expr)
    where = f" in {func.name.value}()" if func is not None else " at module level"
    parent = parents.get(expr)
    if isinstance(parent, cst.Arg) and isinstance(parents.get(parent), cst.Call):
        return f"to {code_of(parents.get(parent).func)}(){where}"
    if isinstance(parent, cst.DictElement) and parent.value is expr:
        return f"in a dict{where}"
    return None


def _stored_on_an_object(parents, expr: Any) -> Optional[str]:
    """``obj.attr`` when ``expr`` (apex.amp itself) is the value of ``obj.attr = amp``."""
    assign = parents.get(expr)
    if not (isinstance(assign, cst.Assign) and assign.value is expr and len(assign.targets) == 1):
        return None
    target = assign.targets[0].target
    return code_of(target) if isinstance(target, cst.Attribute) else None


#: why a launcher's initialize scaled no loss, when some file of the repository scales one
UNSCALED_HERE = "no amp.scale_loss is reached from this file (its calls, followed through the repository, reach none)"


def unscaled_why(info: AmpFile) -> str:
    if info.plan is not None and info.plan.unbound_reached:
        return (f"the amp.scale_loss reached from this file, in {info.plan.unbound_reached}, reads a name amp "
                "that is not bound there, so it raises NameError before it scales, in the original too (APX234), "
                "and the migrated code fails there the same way")
    if info.plan is not None and info.plan.unscaled_here:
        return UNSCALED_HERE
    return "no file of the repository calls amp.scale_loss"


def _unscaled_refusal(init: InitSite, info: AmpFile, stepless: str = "") -> Optional[str]:
    """Why the initialize of a repository that scales no loss (or, with ``stepless``, whose
    optimizers are never stepped: that reason) cannot become autocast around its models'
    forward passes (None: it can).  Each model must be a name or attribute whose
    ``forward`` can be replaced, and nothing else of the file may need apex's loss scaler."""
    fails = not stepless and info.plan is not None and bool(info.plan.unbound_reached)
    nothing = f"{unscaled_why(info)}, so apex {'never scaled a loss of' if fails else 'trained'} this model" + (
        "" if fails else " without loss scaling"
    )
    if stepless:
        nothing = f"{stepless}, so apex scaled no loss of this initialize"
    odd = [m for m in init.models if not isinstance(m, (cst.Name, cst.Attribute))]
    if odd or not init.models:
        model = code_of(odd[0]) if odd else "(none)"
        return f"{nothing}; but the model {model} is not a name whose forward can be wrapped"
    kinds = sorted({n.kind for n in info.needs if n.kind != "master_params"})
    if kinds:
        return f"{nothing}; but this file still uses apex's loss scaler ({', '.join(kinds)})"
    return None


def _stepless(rule, training: List[InitSite], info: AmpFile) -> bool:
    """Whether every training initialize of the file (none scaling a loss here) has
    optimizers that are never stepped and never leave its function (``_amp_stepless``) and
    can become autocast around its models: then each is marked ``unscaled`` with that
    reason and True is returned; else nothing is changed (the caller's refusal stands, or
    the model's own, which it records)."""
    reasons = []
    for init in training:
        names, _why = stepless_optimizers(rule, init)
        if not names:
            return False
        reasons.append(stepless_why(names, init.func.name.value))
    refusals = [_unscaled_refusal(init, info, why) for init, why in zip(training, reasons)]
    if any(refusals):
        info.blockers.extend(Blocker(init.call, why) for init, why in zip(training, refusals) if why)
        return True
    for init, why in zip(training, reasons):
        init.unscaled, init.unscaled_why, init.stepless = True, why, True
    return True


def _where(func: Optional[cst.FunctionDef]) -> str:
    """``in train()``, or ``at module level``: where a site stands, for a reason (a line
    number would move with the TODOs written above it)."""
    return f"in {func.name.value}()" if func is not None else "at module level"


def _check_layout(rule, info: AmpFile) -> None:
    """Decide the scaler's home and how it reaches every site; record blockers."""
    parents = rule.parents
    training = info.training_inits
    if training and info.plan is not None and info.plan.refusal:
        info.blockers.extend(Blocker(init.call, info.plan.refusal) for init in training)
        return
    if not training and info.plan is not None and info.plan.module_reader:
        _check_reader_layout(rule, info)
        return
    remote = bool(info.entry_functions or info.class_threaded or info.carried_functions or info.received)
    remote = (remote or bool(info.given_by_launchers)) and not training
    if training and info.plan is not None and info.plan.returns_scaler and not info.scale_losses and not info.needs:
        _check_factory(rule, info)
        return
    if remote:
        _check_remote_layout(rule, info)
        return
    if info.refused_inits and not training:
        return  # the file keeps apexcompat.amp for the initialize's own reason
    if info.scale_losses and not training:
        for site in info.scale_losses:
            message = "amp.initialize is not in this file, so the scaler cannot reach this amp.scale_loss"
            if info.initialized_in_callee:
                why = info.initialized_in_callee
                info.blockers.append(Blocker(site.with_stmt, f"the scaler cannot reach this amp.scale_loss: {why}"))
                continue
            if info.received_refusal:
                info.blockers.append(Blocker(site.with_stmt, info.received_refusal))
                continue
            note = plan_note(rule, info, site.with_stmt)
            info.blockers.append(Blocker(site.with_stmt, f"{message} ({note})" if note else message))
        return
    inherited = _inherited_home(rule, training, info)
    lent = info.carrier is not None and bool(info.carrier.lent)  # scaled in another file's function
    lent = lent or (info.plan is not None and bool(info.plan.attach_scaler))  # on an instance (APX248)
    scaled_elsewhere = (
        bool(training)
        and not info.scale_losses
        and not (info.plan is not None and info.plan.amp_value_calls)
        and not info.passes
        and not info.carriers
        and not inherited
        and not lent
    )
    if scaled_elsewhere and info.plan is not None and info.plan.module_home and not any(s.old_api for s in training):
        return  # it assigns the GradScaler of the module the plan names, whose code scales (APX250)
    if scaled_elsewhere and info.plan is not None and info.plan.module_readers:
        why = reader_home(rule, training, info)  # the home of the reader route (APX252)
        if why:
            info.blockers.extend(Blocker(init.call, why) for init in training)
        else:
            info.module_scaler = True
        return
    if scaled_elsewhere and all(s.old_api for s in training):
        for init in training:  # ``amp_handle = amp.init(...)`` in an evaluation script
            init.inference = True
        return
    if scaled_elsewhere:
        note = info.plan.note_for(MODULE_LEVEL) if info.plan is not None else None
        if note is None and len(training) == 1:
            from ._amp_context_var import library_wrappers_beside

            note = library_wrappers_beside(rule, training[0], info)
            if note is None:
                return
        elsewhere = "no amp.scale_loss in this file: the losses are scaled elsewhere"
        if note == elsewhere and info.refused_scales:
            note = (f"the amp.scale_loss of this file ({info.refused_scales[0]}) has no native rewrite "
                    "(the finding there says why)")
        if note == elsewhere and info.unbound_scales and not (info.plan is not None and info.plan.unbound_reached):
            note = (f"the amp.scale_loss of this file ({info.unbound_scales[0]}) reads a name amp that is not "
                    "bound there, so it raises NameError, in the original too (APX234): fix that first")
        if note == elsewhere and info.stored_as and info.carrier is None:
            # (a proven carrier's reads are all followed: none of them scales)
            facts = getattr(info.plan, "carrier", None)
            read = f" (read off an object in {', '.join(facts.read_elsewhere)})" if facts and facts.read_elsewhere else ""
            note = f"no amp.scale_loss in this file: the losses are scaled through {info.stored_as}{read}, not followed"
            if facts is not None and facts.holder_refusal:
                note = (f"no amp.scale_loss in this file: the losses are scaled through {info.stored_as}, which is "
                        f"not followed because {facts.holder_refusal}")
            if info.lending_refused:
                note += f" ({info.lending_refused})"
        if note == elsewhere and info.plan is not None and info.plan.nothing_scaled:
            note = _unscaled_refusal(training[0], info)
            if note is None:
                training[0].unscaled = True
                training[0].unscaled_why = unscaled_why(info) if info.plan.unscaled_here else ""
                training[0].unscaled_fails = bool(info.plan.unbound_reached)
                return
        if note in (None, elsewhere) and info.plan is not None:
            note = info.plan.note_for(SCALED_ELSEWHERE) or note
        if note in (None, elsewhere) and info.handed_on:
            note = (f"no amp.scale_loss in this file: apex.amp is handed on as a value ({info.handed_on[0]}), "
                    "and what the code it reaches does with it (the losses it may scale) is not followed")
        if (note in (None, elsewhere) or note.startswith(NOT_PROVEN)) and _stepless(rule, training, info):
            return  # no loss of it can be scaled: autocast, no GradScaler (``_amp_stepless``)
        if info.plan is not None and info.plan.module_refusal and not info.plan.module_scaler:
            # the reader route's refusal (APX252): why the other files cannot read a module-level GradScaler
            note = f"{note or elsewhere}; nor can a module-level GradScaler stand in: {info.plan.module_refusal}"
        for init in training:
            info.blockers.append(Blocker(init.call, note or elsewhere))
        return
    if not training:
        for need in info.needs:
            if need.kind == "master_params" and not info.scale_losses:
                continue  # the optimizer's param groups, what apex yielded: no scaler needed
            if need.via is not None:
                continue  # said once, where the local or the loop takes apex's loss scaler
            if inference_load(rule, need, info):
                continue  # the initialize rule drops it (APX280)
            info.blockers.append(Blocker(need.node, _no_training_init(need, info)))
        return
    for site in info.scale_losses:
        _check_steps(rule, site, info)
    if _helpers_called_elsewhere(rule, info):
        return
    needy = [s.func for s in info.scale_losses] + [n.func for n in info.needs]
    home = training[0].func
    per_method = False
    if len(training) > 1 and not _alternatives(parents, training) and _in_sequence(rule, training, info):
        info.absorbed = training[1:]
    elif len(training) > 1 and raised_reinitializes(rule, training):
        for init in training[1:]:
            init.raised = APEX_REFUSAL
        info.absorbed = training[1:]
    elif len(training) > 1 and (absorbed := _per_function_homes(rule, training, info)) is not None:
        # a launcher initializing in several functions: each creates its own GradScaler
        info.absorbed = absorbed
        for init in training:
            info.access[init.func] = info.scaler_name
        per_method = True
    elif len(training) > 1 and not _alternatives(parents, training):
        why = _per_method_refusal(rule, training, info)
        if why != "":
            message = why or _old_torch_only(rule, training) or _twice_why(training)
            for init in training[1:]:
                info.blockers.append(Blocker(init.call, message))
            return
        per_method = True
        if len({class_of_method(parents, init.func) for init in training}) > 1:
            for init in training:  # methods of several classes: each makes a GradScaler of its own
                info.access[init.func] = info.scaler_name
    info.alternatives = len(training) > 1 and not per_method and not info.absorbed
    home_cls = class_of_method(parents, home)
    if home_cls is not None and (
        inherited
        or any(f is not home and class_of_method(parents, f) is home_cls for f in needy)
        or any(held_instance(rule, class_of_method(parents, f), home_cls)[0] for f in needy)
    ):
        info.storage = "self"
        if training[0].stale_guard is not None and inherited == "override":
            info.scaler_in_branch = True  # the base's __init__ makes the disabled one
        elif training[0].stale_guard is not None:
            from ._amp_run_once import run_once_anchor

            info.run_once, why = run_once_anchor(rule, training, home_cls)
            if info.run_once is None:
                where = f"; the GradScaler created in its branch instead needs a disabled one first: {why}"
                info.blockers.append(Blocker(training[0].call, training[0].stale_guard + (where if why else "")))
                return
            info.scaler_in_branch = True
        guard = _conditional_call(rule, home, home_cls) if home is not None and not info.scaler_in_branch else None
        if home is not None and guard is not None:
            info.fallback, why = _fallback_before(rule, home, home_cls, guard, needy, info.scaler_name)
            if info.fallback is None:
                info.blockers.append(
                    Blocker(
                        training[0].call,
                        f"the GradScaler would be created in {home.name.value}(), which runs only if "
                        f"{code_of(guard.test)}; {why}",
                    )
                )
                return
    first_anchor_line = min(rule.line_of(s.anchor) for s in training)
    saved = (dict(info.access), dict(info.threaded), dict(info.class_threaded))
    unreached = [func for func in dict.fromkeys(needy) if _access(rule, func, home, home_cls, info, set()) is None]
    route = _returned_scaler(rule, training, needy) if unreached else None
    unbound_use = ""
    if route is not None:
        passed = (info.access, info.threaded, info.class_threaded)
        disabled, info.disabled_calls = info.disabled_calls, []
        info.access, info.threaded, info.class_threaded = (dict(x) for x in saved)  # type: ignore[assignment]
        caller = enclosing_function(parents, route[0][0])
        missed = [f for f in dict.fromkeys(needy) if _access(rule, f, caller, None, info, set()) is None]
        early = _use_before_the_unpacking(rule, caller, route[0], info) if not missed else None
        if early is not None:
            unbound_use = (
                f"amp.initialize is in {home.name.value}(), and {caller.name.value}() {early} where no call "
                f"of {home.name.value}() before it in the same block would hand the GradScaler back"
            )
        if missed or home in info.access or early is not None:
            info.access, info.threaded, info.class_threaded = passed
            info.disabled_calls = disabled
        else:
            info.returned_to, info.returns, info.early_returns = route
            unreached, home, first_anchor_line = [], caller, min(rule.line_of(c) for c in route[0])
    taken, not_module = module_route(rule, training, unreached, home, info) if unreached else (False, "")
    if taken:
        info.module_scaler = True
        for func in unreached:
            info.access[func] = info.scaler_name
        unreached = []
    for func in unreached:
        node = next((s.with_stmt for s in info.scale_losses if s.func is func), None) or next(
            n.node for n in info.needs if n.func is func
        )
        name = func.name.value if func is not None else "module level"
        reason = unreached_reason(
            rule, func, home_cls, info, reaches=lambda where: _reaches(rule, where, home, home_cls, info)
        )
        if reason and _called_from(rule, func, home):
            why = reason  # the GradScaler reaches some calls: the others stand in the way, not where it is made
        else:
            why = _no_return_route(rule, training, func, needy) or unbound_use or _not_returned(
                rule, training, needy
            ) or reason or _early_return_why(rule, training, needy) or _helper_called_nowhere(rule, training)
        message = f"the scaler created at amp.initialize cannot be passed to {name}"
        why = f"{why}; {not_module}" if why and not_module else why or not_module
        info.blockers.append(Blocker(node, f"{message}: {why}" if why else message))
    in_home: List[Any] = [s.with_stmt for s in info.scale_losses if s.func is home]
    in_home += [n.node for n in info.needs if n.func is home]
    tests = {n.node for n in info.needs if n.kind in ("amp_param_on", "amp_param_off")}
    passing = {n.node for n in info.needs if n.kind == "pass_scaler"}
    early = [n for n in in_home if rule.line_of(n) < first_anchor_line]
    hoist_why = ""
    if early and all(n in passing for n in early) and _plain_creation(training, info, per_method):
        training[0].hoist_before, hoist_why = hoist_target(rule, training[0], early)
    for node in in_home:
        if rule.line_of(node) >= first_anchor_line:
            continue
        if node in passing and training[0].hoist_before is not None:
            continue  # the GradScaler is created before the statement holding the first of them
        if node in passing:
            why = f" ({hoist_why})" if hoist_why else ""
            info.blockers.append(Blocker(node, f"{code_of(node.func)}() is called before amp.initialize, so it cannot "
                                         f"be given the GradScaler{why}"))
            continue
        what = "this site"
        if node in tests:
            # ``if amp: optimizer.state = {}`` before ``amp.initialize`` (unilm's s2s-ft)
            what = f"the test `{code_of(node).strip()}` (whether apex.amp was handed in: the GradScaler's switch)"
        info.blockers.append(
            Blocker(node, f"{what} comes before amp.initialize in the same function, where no GradScaler exists yet")
        )
    threaded: List[Any] = list(info.threaded.items()) + list(info.class_threaded.items())
    for func, calls in threaded:
        for call in calls:
            if enclosing_function(parents, call) is home and rule.line_of(call) < first_anchor_line:
                info.blockers.append(Blocker(call, f"{func.name.value}() is called before amp.initialize"))
            elif enclosing_function(parents, call) is home:
                in_home.append(call)
    if info.carrier is not None:
        in_home.extend(info.carrier.calls)  # they read the GradScaler off the carrier
    if info.returned_to:
        return  # no use in the helper itself
    if info.alternatives:
        _no_use_among_alternatives(rule, training, in_home, info)
    elif per_method:
        for init in training:
            if init in info.absorbed:
                continue  # the GradScaler the first initialize of its function created serves it
            uses = [s.with_stmt for s in info.scale_losses if s.func is init.func]
            _scaler_before_the_if(rule, init, uses + [n.node for n in info.needs if n.func is init.func], info)
    else:
        _scaler_before_the_if(rule, training[0], in_home, info)
        _used_after_its_loop(rule, training[0], in_home, info)


def _check_factory(rule, info: AmpFile) -> None:
    """The plan's model factory: its initializes (one, alternatives, or several in sequence
    with the same options) make the GradScaler, and every ``return`` of the factory, each a
    tuple after them, gives it back as one more value (else blockers say why not)."""
    parents = rule.parents
    training = info.training_inits
    factory = info.plan.returns_scaler
    func = training[0].func
    if func is None or func.name.value != factory or any(init.func is not func for init in training):
        for init in training:
            info.blockers.append(Blocker(init.call, f"amp.initialize is not only in {factory}()"))
        return
    info.alternatives = len(training) > 1 and _alternatives(parents, training)
    if len(training) > 1 and not info.alternatives:
        why = _not_in_sequence(rule, training)
        if why:
            for init in training[1:]:
                info.blockers.append(Blocker(init.call, why))
            return
        info.absorbed = training[1:]
    returns = _tuple_returns(rule, func, training, None)
    if not returns:
        for init in training:
            info.blockers.append(
                Blocker(
                    init.call,
                    f"{factory}() does not return a tuple after its amp.initialize on every path, "
                    "so the GradScaler cannot be returned with what it makes",
                )
            )
        return
    info.returns = returns
    info.returned_elsewhere = info.plan.returned_to


def inference_load(rule, need: Need, info: AmpFile) -> bool:
    """Whether ``need`` is an ``amp.load_state_dict(x)`` statement of a file whose
    initializes are all for inference (no optimizers) and whose run, followed through the
    repository, scales no loss (the plan's ``nothing_scaled``): the loss scale it restores is
    read by nothing, so the statement can go and the checkpoint still loads."""
    if need.kind != "load_state_dict" or not info.inits or info.training_inits:
        return False
    if info.plan is None or not info.plan.nothing_scaled:
        return False
    return holds_only(rule.parents.get(rule.parents.get(need.node)), need.node)


def _no_training_init(need: Need, info: AmpFile) -> str:
    """Why ``need`` has no GradScaler in a file without a training amp.initialize: none is
    in the file, or only one for inference (given no optimizers), which makes none."""
    if not info.inits:
        return "amp.initialize is not in this file, so the scaler cannot reach this site"
    what = {"load_state_dict": "restores", "state_dict": "saves"}.get(need.kind)
    if what is None:
        return ("the amp.initialize of this file is for inference (no optimizers), so no GradScaler is made here "
                "to reach this site")
    return (f"amp.{need.kind} {what} the loss scale of a training run, but the amp.initialize of this file is for "
            "inference (no optimizers), so no GradScaler is made here; where no code run in the same process "
            "scales a loss, the line can go")


def _helpers_called_elsewhere(rule, info: AmpFile) -> bool:
    """An ``amp.master_params`` of a method that another file also calls (the plan's
    ``helpers_called_elsewhere``) cannot get a ``scaler.unscale_`` of its own: it would divide
    gradients that caller's plain backward never scaled.  The unscale_ goes before this
    file's calls of the method instead (``unscale_at_callers``) when every loss of the file
    is stepped in the function that scales it, so no other file calls the method between a
    scaled backward and its step; else the site is blocked.  True when one was blocked."""
    blocked = False
    for need, where in helpers_called_elsewhere(rule, info):
        key = f"{class_of_method(rule.parents, need.func).name.value}.{need.func.name.value}"
        why = _stepped_apart(rule, info)
        if not why:
            info.unscale_at_callers.add(need.func)
            continue
        info.blockers.append(
            Blocker(
                need.node,
                f"{key}() reads the gradients apex had unscaled, and {where} calls a method of that name "
                f"(after a backward no GradScaler scales, if it is this one), so the unscale_ cannot go "
                f"inside it; {why}",
            )
        )
        blocked = True
    return blocked


def _scales_afresh(rule, info: AmpFile, need: Need) -> bool:
    """Whether the method holding ``need`` (an ``amp.master_params`` read) clears the
    gradients, then runs the scaled backward itself before the read, on every path to it:
    ``.zero_grad()`` in its own body ahead of every call ``self.<method>(...)`` of a method of
    its class holding an amp.scale_loss, and such a call ahead of the read (the Hugging Face
    ``Trainer.train()``: ``model.zero_grad()``, then a loop calling ``self.training_step()`` and
    clipping).  Whoever calls the method, the gradients it reads are those of its own scaled
    backwards, so its own unscale_ is right (``clipping`` places it): a caller in another file
    does not block it.  A method that does not clear them first could be called after a plain
    backward, whose gradients the unscale_ would divide too."""
    cls = class_of_method(rule.parents, need.func)
    me = self_name(need.func)
    scaling = {
        site.func.name.value
        for site in info.scale_losses
        if site.func is not None and class_of_method(rule.parents, site.func) is cls
    }
    if cls is None or not me or not scaling:
        return False

    def scales(call: cst.Call) -> bool:
        func = call.func
        return (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == me
            and func.attr.value in scaling
        )

    def clears(call: cst.Call) -> bool:
        return isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad" and not call.args

    body = list(need.func.body.body)
    cleared = next((i for i, stmt in enumerate(body) if _always_calls(stmt, clears)), None)
    if cleared is None or any(scales(c) for stmt in body[: cleared + 1] for c in walk_of(stmt, cst.Call)):
        return False
    child: Any = need.node
    cur = rule.parents.get(child)
    while cur is not None and cur is not need.func:
        if isinstance(cur, cst.IndentedBlock):
            for stmt in cur.body:
                if stmt is child:
                    break
                if _always_calls(stmt, scales):
                    return True
        child, cur = cur, rule.parents.get(cur)
    return False


#: expressions whose parts may not run
_CONDITIONAL_PARTS = (cst.Lambda, cst.IfExp, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp,
                      cst.GeneratorExp)


def _always_calls(stmt: Any, wanted: Any) -> bool:
    """Whether running ``stmt`` runs a call ``wanted`` accepts, on every path through it (a
    loop may run no time; an ``if`` needs its ``else``)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        stack: List[Any] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, _CONDITIONAL_PARTS):
                continue
            if isinstance(node, cst.Call) and wanted(node):
                return True
            stack.extend(node.children)
        return False
    if isinstance(stmt, cst.If):
        return stmt.orelse is not None and _always_calls(stmt.body, wanted) and _always_calls(
            stmt.orelse if isinstance(stmt.orelse, cst.If) else stmt.orelse.body, wanted)
    if isinstance(stmt, (cst.With, cst.Try)):
        return _always_calls(stmt.body, wanted)
    if isinstance(stmt, cst.IndentedBlock):
        return any(_always_calls(s, wanted) for s in stmt.body)
    return False


def helpers_called_elsewhere(rule, info: AmpFile) -> List[Tuple[Need, str]]:
    """The ``amp.master_params`` needs of methods the plan found called from another file
    (``FilePlan.helpers_called_elsewhere``), each with where; but for those that clear the
    gradients and run the scaled backward themselves before the read (``_scales_afresh``)."""
    elsewhere = dict(info.plan.helpers_called_elsewhere) if info.plan is not None else {}
    found = []
    for need in info.needs:
        cls = class_of_method(rule.parents, need.func) if need.kind == "master_params" else None
        key = f"{cls.name.value}.{need.func.name.value}" if cls is not None else ""
        if key in elsewhere and not _scales_afresh(rule, info, need):
            found.append((need, elsewhere[key]))
    return found


def _stepped_apart(rule, info: AmpFile) -> str:
    """Why a loss of this file may be stepped outside the function that scales it ("" when
    each is stepped there): between the two, another file could call a helper on gradients
    the GradScaler still holds scaled."""
    for site in info.scale_losses:
        for opt in site.optimizers:
            steps = find_steps(rule, site, code_of(opt)) if isinstance(opt, (cst.Name, cst.Attribute)) or keyed_optimizer(opt) else []
            if not steps or any(enclosing_function(rule.parents, c) is not site.func for c in steps):
                name = site.func.name.value if site.func is not None else "module level"
                return f"the loss scaled in {name}() is not stepped there alone"
    return ""


def _in_sequence(rule, inits: List[InitSite], info: AmpFile) -> bool:
    """Initializes of one function one after the other on one path with the same options
    (``g, g_opt = amp.initialize(g, g_opt, ...)`` then ``d, d_opt = amp.initialize(d, d_opt,
    ...)``, a GAN's setup), with no loss scaled between them: one GradScaler created at the
    first serves them all, as the last one's loss scaler served every optimizer under apex."""
    func = inits[0].func
    if any(init.func is not func for init in inits) or _not_in_sequence(rule, inits):
        return False
    first, last = rule.line_of(inits[0].stmt), rule.line_of(inits[-1].stmt)
    return not any(s.func is func and first < rule.line_of(s.with_stmt) < last for s in info.scale_losses)


def _old_torch_only(rule, training: List[InitSite]) -> str:
    """Why the initializes keep the shim when each runs only on a torch older than the one
    the native rewrite needs ("" otherwise): the file already has its own torch path."""
    branches = [old_torch_branch(rule.parents, init.stmt, rule.settings.target_torch) for init in training]
    if any(branch is None for branch in branches):
        return ""
    first = branches[0]
    assert first is not None
    return (
        f"amp.initialize runs only in the branch of `{code_of(first.test)}` (line {rule.line_of(first)}) "
        f"that no torch from {'.'.join(map(str, rule.settings.target_torch))} on (--target-torch) takes, so "
        "under the native rewrite this apex.amp code never runs: delete that branch (and what only it sets) by hand"
    )


def _per_function_homes(rule, training: List[InitSite], info: AmpFile) -> Optional[List[InitSite]]:
    """The plan's launcher initializing in several module-level functions (``several_launchers``):
    each function initializes once, or several times one after the other with the same
    options, the file scales no loss itself, and every use of the GradScaler (a call that
    hands it on, amp's state saved or loaded) is in one of those functions, after its first
    initialize.  Each function creates its own GradScaler, as apex's initialize there made its
    loss scalers; returns the initializes absorbed into the first of their function (None
    where the shape is not that)."""
    parents = rule.parents
    if info.scale_losses or info.plan is None or not info.plan.pass_to:
        return None
    groups: Dict[Any, List[InitSite]] = {}
    for init in training:
        if init.func is None or not isinstance(parents.get(init.func), cst.Module):
            return None
        groups.setdefault(init.func, []).append(init)
    if len(groups) < 2:
        return None
    absorbed: List[InitSite] = []
    for func, inits in groups.items():
        if len(inits) > 1:
            if not _in_sequence(rule, inits, info):
                return None
            absorbed.extend(inits[1:])
    first_line = {func: min(rule.line_of(i.stmt) for i in inits) for func, inits in groups.items()}
    for need in info.needs:
        if need.func not in groups or rule.line_of(need.node) < first_line[need.func]:
            return None
    return absorbed


def _twice_why(training: List[InitSite]) -> str:
    """Why more than one training initialize keeps the shim, naming apex's old ``amp.init()``
    where it is one of them (neural_sp calls it after amp.initialize)."""
    if any(s.old_api for s in training) and not all(s.old_api for s in training):
        return (
            "amp.init() (apex's old handle API) is called beside amp.initialize for training; "
            "one GradScaler cannot follow both"
        )
    return "amp.initialize is called for training more than once; one GradScaler cannot follow both"


def _not_in_sequence(rule, inits: List[InitSite]) -> str:
    """Why initializes of one function are not one after the other with the same options
    (then the one GradScaler the first creates is apex's: each initialize replaced all loss
    scalers, so the last one's scaled every loss); "" when they are.  A later one may sit in
    a branch nested inside the first one's (``if args.moco:`` under ``if args.amp:``): the
    first, and its GradScaler, ran on every path that reaches it."""
    paths = [_branches_around(rule.parents, init.stmt) for init in inits]
    first_path = paths[0]
    if first_path is None or any(
        p is None or any(p.get(chain) != branch for chain, branch in first_path.items()) for p in paths
    ):
        return "amp.initialize is called for training more than once, not one after the other on one path"

    def options(init: InitSite) -> List[str]:
        return [code_of(a).strip().rstrip(",").strip() for a in option_args(init.call)]

    first = options(inits[0])
    for init in inits[1:]:
        if options(init) != first:
            return (
                "amp.initialize is called for training more than once with different options "
                f"({', '.join(options(init)) or 'none'} here, {', '.join(first) or 'none'} first): "
                "one GradScaler cannot follow both"
            )
    return ""


def _inherited_home(rule, training: List[InitSite], info: AmpFile) -> str:
    """The plan's inheritance route for the one training initialize: "base" in the
    launcher's initializing class (subclasses in other files scale through its
    ``self.<scaler>``), "override" in a subclass's override of that method; else ""."""
    if info.plan is None or len(training) != 1 or training[0].func is None:
        return ""
    cls = class_of_method(rule.parents, training[0].func)
    if cls is None:
        return ""
    if cls.name.value == info.plan.heir_base:
        return "base"
    return "override" if cls.name.value in info.plan.heir_inits else ""


def _per_method_refusal(rule, inits: List[InitSite], info: AmpFile) -> Optional[str]:
    """Initializes in different methods of one class, each method's sites its own: they
    share ``self.<scaler>``, which each initialize re-creates as apex replaced its loss
    scalers at every initialize.  "" when that is proven; None when the initializes are not
    one per method of one class (the plain refusal); else the whole reason why not."""
    parents = rule.parents
    funcs = [init.func for init in inits if init.func is not None]
    classes = [class_of_method(parents, f) for f in funcs]
    if len(funcs) != len(inits) or None in classes or len(set(funcs)) != len(funcs):
        return None
    anchor_line = {init.func: rule.line_of(init.stmt) for init in inits}
    if any(c is not classes[0] for c in classes):
        # methods of several classes (a subclass's own train()): each method's sites must be
        # its own, as no method of one class can reach the GradScaler another one made
        owners = " and ".join(f"{c.name.value}.{f.name.value}()" for c, f in zip(classes, funcs))
        why = _not_each_ones_own(rule, None, anchor_line, info)
        but = f"amp.initialize is called for training in {owners}, each could create its own GradScaler, but"
        return f"{but} {why}" if why else ""
    cls = classes[0]
    methods = " and ".join(f"{f.name.value}()" for f in funcs)
    but = f"amp.initialize is called for training in {methods} of {cls.name.value}, each could create its own "
    but += "GradScaler, but"
    why = _not_each_ones_own(rule, cls, anchor_line, info)
    return f"{but} {why}" if why else ""


def _not_each_ones_own(rule, cls: Any, anchor_line: Dict[Any, int], info: AmpFile) -> str:
    """Why the sites of ``info`` are not each the own of one initializing method of ``cls``
    (``anchor_line``: those methods -> the line of their initialize); "" when they are.
    With ``cls`` None (the methods of several classes) every site must be in one of them."""
    parents = rule.parents
    sites = [(s.with_stmt, s.func) for s in info.scale_losses] + [(n.node, n.func) for n in info.needs]
    for node, func in sites:
        if func in anchor_line:
            if rule.line_of(node) < anchor_line[func]:
                return f"a site of {func.name.value}() comes before its amp.initialize"
            continue
        if cls is None:
            where = f"{func.name.value}()" if func is not None else "the module level"
            return f"{where} uses the scaler outside those methods"
        if func is None or class_of_method(parents, func) is not cls:
            return f"a site outside the methods of {cls.name.value} uses the scaler"
        name = func.name.value
        for ref in walk(rule.tree):
            if not (isinstance(ref, cst.Name) and ref.value == name and ref is not func.name):
                continue
            attr, call = parents.get(ref), parents.get(parents.get(ref))
            caller = enclosing_function(parents, ref)
            if not (
                isinstance(attr, cst.Attribute)
                and attr.attr is ref
                and isinstance(call, cst.Call)
                and call.func is attr
                and caller in anchor_line
                and code_of(attr.value) == self_name(caller)
                and rule.line_of(call) > anchor_line[caller]
            ):
                return f"{name}() is also called elsewhere than after the amp.initialize of one of them"
    return ""


def _returned_scaler(
    rule, inits: List[InitSite], needy: List[Any]
) -> Optional[Tuple[List[cst.Call], List[cst.Return], List[cst.Return]]]:
    """A module-level helper that initializes (``model, opt, sched = setup(model, ...)``) and
    uses no scaler itself can return the scaler to its caller as one more value, when that is
    provable: its calls in the file all in one module-level function, each a statement of
    that function's body, or of ``if``/``else`` branches or plain ``with`` blocks in it
    (``if args.do_train: ... = setup(...)`` / ``elif args.do_eval: ... = setup(...)``), that
    unpacks a tuple of one width, and every ``return`` of the helper a tuple of as many
    values, after the ``if`` that creates the scaler, or before it on a path without mixed
    precision (``_early_returns``: it gives back a disabled one).  Returns those calls, the
    helper's returns after the initialize and those before it (``_uses_follow_the_unpacking``
    checks that the scaler is used only after one)."""
    parents = rule.parents
    helper = inits[0].func
    if helper is None or not isinstance(parents.get(helper), cst.Module) or helper in needy:
        return None
    calls = _callers(rule, helper)
    if not calls or _why_not_unpacked(rule, calls):
        return None
    widths = {len(parents[c].targets[0].target.elements) for c in calls}
    if len(widths) != 1:
        return None
    early: List[cst.Return] = []
    returns = _tuple_returns(rule, helper, inits, widths.pop(), early)
    return (calls, returns, early) if returns else None


def _why_not_unpacked(rule, calls: List[cst.Call]) -> str:
    """Why the helper's ``calls`` cannot each unpack one more returned value in their one
    caller, as the clause after ``amp.initialize is in setup(), `` ("" when they can): each
    must be the whole value of a one-statement line that assigns a tuple without a star, in
    the body of one module-level function (or branches and plain ``with`` blocks in it)."""
    parents = rule.parents
    callers = {enclosing_function(parents, c) for c in calls}
    if len(callers) != 1:
        return f"which is called from {len(callers)} functions in this file, so the GradScaler cannot be returned to one caller"
    caller = callers.pop()
    if caller is None or not isinstance(parents.get(caller), cst.Module) or not isinstance(
        caller.body, cst.IndentedBlock
    ):
        where = f"{caller.name.value}()" if caller is not None else "module level"
        return f"which is called in {where}, no module-level function, so the GradScaler cannot be returned there"
    for call in calls:
        assign, line = parents.get(call), parents.get(parents.get(call))
        if not (
            isinstance(assign, cst.Assign)
            and assign.value is call
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, (cst.Tuple, cst.List))
            and not any(isinstance(e, cst.StarredElement) for e in assign.targets[0].target.elements)
            and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and _in_body_through_branches(parents, line, caller.body)
        ):
            which = "whose call is" if len(calls) == 1 else "a call of which is"
            return (f"{which} not a statement of its caller's own body unpacking what it returns, so the "
                    "GradScaler cannot be returned there")
    return ""


def _in_body_through_branches(parents: Dict[Any, Any], line: Any, body: cst.IndentedBlock) -> bool:
    """Whether ``line`` is a statement of ``body``, or of ``if``/``elif``/``else`` branches and
    plain ``with`` blocks in it (no precision context, ``_in_body_through_plain_withs``), no
    loop, ``try`` or nested definition between: what it binds is bound in the function's
    scope from there on in its block."""
    while line not in body.body:
        block = parents.get(line)
        owner = parents.get(block)
        if isinstance(owner, cst.Else):
            owner = parents.get(owner)
        if not isinstance(block, cst.IndentedBlock):
            return False
        if isinstance(owner, cst.If):
            while isinstance(parents.get(owner), cst.If) and parents[owner].orelse is owner:
                owner = parents[owner]  # an elif: its statement is the first if
        elif not (isinstance(owner, cst.With) and _in_body_through_plain_withs(parents, line, block)):
            return False
        line = owner
    return True


def _called_from(rule, func: Any, home: Any) -> bool:
    """Whether the module-level function ``func`` is called in ``home`` (where the scaler is)."""
    if func is None or home is None or not isinstance(rule.parents.get(func), cst.Module):
        return False
    return any(enclosing_function(rule.parents, c) is home for c in _callers(rule, func) or [])


def _use_before_the_unpacking(rule, caller: Any, calls: List[cst.Call], info: AmpFile) -> Optional[str]:
    """What in ``caller`` uses the scaler (a call of a function or class it is handed to,
    an amp site of ``caller`` itself) where that is not a statement after one of the helper's
    ``calls`` in that call's block, nor nested in one that is: there the name they unpack may
    be unbound.  None when every such use follows one."""
    parents = rule.parents
    lines = [_through_plain_withs(parents, parents[parents[c]]) for c in calls]
    uses: List[Tuple[str, Any]] = [(f"calls {f.name.value}()", c) for f, cs in info.threaded.items() for c in cs]
    uses += [(f"builds {k.name.value}", c) for k, cs in info.class_threaded.items() for c in cs]
    uses += [("scales a loss", s.with_stmt) for s in info.scale_losses if s.func is caller]
    uses += [("uses the scaler", n.node) for n in info.needs if n.func is caller]
    for what, node in uses:
        if enclosing_function(parents, node) is not caller:
            continue
        chain = [node] + _ancestors(parents, node)
        if not any(_statement_after(parents, line, chain) for line in lines):
            return what
    return None


def _through_plain_withs(parents: Dict[Any, Any], line: Any) -> Any:
    """The outermost of the plain ``with`` blocks (``_in_body_through_plain_withs``: timing,
    logging) nested around ``line``, or ``line`` when there is none: their bodies run straight
    through, so what ``line`` binds is bound after that ``with`` statement."""
    while True:
        block = parents.get(line)
        owner = parents.get(block)
        if not (
            isinstance(block, cst.IndentedBlock)
            and isinstance(owner, cst.With)
            and _in_body_through_plain_withs(parents, line, block)
        ):
            return line
        line = owner


def _statement_after(parents: Dict[Any, Any], line: Any, chain: List[Any]) -> bool:
    """Whether one of ``chain`` (a node and its ancestors) is a statement of the block
    holding ``line``, after it."""
    block = parents.get(line)
    statements = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    if line not in statements:
        return False
    later = statements[statements.index(line) + 1 :]
    return any(node in later for node in chain)


def _not_returned(rule, inits: List[InitSite], needy: List[Any]) -> str:
    """Why the helper holding the initialize (``setup(...)``, a module-level function that
    needs no scaler itself) cannot return the GradScaler to its caller (``_returned_scaler``);
    "" when there is no such helper or nothing stands in the way."""
    helper = inits[0].func
    if helper is None or not isinstance(rule.parents.get(helper), cst.Module) or helper in needy:
        return ""
    calls = _callers(rule, helper)
    shown = f"{helper.name.value}()"
    if calls is None:
        return ""
    why = _why_not_unpacked(rule, calls)
    return f"amp.initialize is in {shown}, {why}" if why else ""


def _early_return_why(rule, inits: List[InitSite], needy: List[Any]) -> str:
    """Why the helper holding the initialize cannot hand a GradScaler back from a return it
    makes before it (``_early_returns``): "" when it makes none such."""
    parents = rule.parents
    helper = inits[0].func
    if helper is None or not isinstance(parents.get(helper), cst.Module) or helper in needy:
        return ""
    body = list(helper.body.body) if isinstance(helper.body, cst.IndentedBlock) else []
    anchors = {outermost_if(parents, init.stmt) for init in inits}
    if len(anchors) != 1 or next(iter(anchors)) not in body:
        return ""
    after = body.index(next(iter(anchors)))
    for node in walk_of(helper, cst.Return):
        if enclosing(parents, node, (cst.FunctionDef, cst.Lambda)) is not helper:
            continue
        top = next(p for p in [node] + _ancestors(parents, node) if parents.get(p) is helper.body)
        if body.index(top) < after and not early_return_ok(parents, helper, node, None):
            return (f"amp.initialize is in {helper.name.value}(), which returns before it (line "
                    f"{rule.line_of(node)}), a return not proven to be the path without mixed precision (a tuple "
                    "like its other returns, under tests of its own parameters only, which it never sets)")
    return ""


def _helper_called_nowhere(rule, inits: List[InitSite]) -> str:
    """The last resort reason: the module-level function holding the initialize is called by
    no function of this file (bonito's ``load_state()``, called from another file like the
    training function): "" when it is called here, or is used another way."""
    helper = inits[0].func
    if helper is None or not isinstance(rule.parents.get(helper), cst.Module):
        return ""
    if _callers(rule, helper, allow_none=True) != []:
        return ""
    return (f"amp.initialize is in {helper.name.value}(), which no function of this file calls, so no caller "
            "here could hand its GradScaler on")


def _no_return_route(rule, inits: List[InitSite], func: Any, needy: List[Any]) -> str:
    """Why ``func``, which calls the module-level helper holding the initialize, cannot get
    the scaler back from it as one more returned value (``_returned_scaler``), for the
    finding; "" when ``func`` calls no such helper or the reason is none of these."""
    parents = rule.parents
    helper = inits[0].func
    if func is None or helper is None or not isinstance(parents.get(helper), cst.Module):
        return ""
    calls = [c for c in _callers(rule, helper) or [] if enclosing_function(parents, c) is func]
    if not calls:
        return ""
    where = f"{func.name.value}() gets the model and optimizer from {helper.name.value}(), where amp.initialize is"
    if helper in needy:
        return (
            f"{where}, which uses the GradScaler itself after creating it, so it is not handed back as one more "
            "returned value"
        )
    return ""


#: context managers that change precision or gradients: never crossed or wrapped as plain
PRECISION_CONTEXTS = frozenset(
    {"autocast", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "scale_loss", "disable_casts"}
)


def _in_body_through_plain_withs(parents: Dict[Any, Any], line: Any, body: cst.IndentedBlock) -> bool:
    """Whether ``line`` is a statement of ``body``, or of ``with`` blocks in it that only time
    or log (``with TimerBlock("Building the model") as block:``, nested too): their bodies run
    unconditionally and bind in the function's scope, so what the line unpacks is there after."""
    while line not in body.body:
        block = parents.get(line)
        owner = parents.get(block)
        if not isinstance(block, cst.IndentedBlock) or not isinstance(owner, cst.With):
            return False
        for item in owner.items:
            context = item.item.func if isinstance(item.item, cst.Call) else item.item
            if code_of(context).split(".")[-1] in PRECISION_CONTEXTS:
                return False
        line = owner
    return True


def _tuple_returns(
    rule, helper: cst.FunctionDef, inits: List[InitSite], width: Optional[int], early: Optional[List[cst.Return]] = None
) -> List[cst.Return]:
    """Every ``return`` of ``helper``, each after the ``if`` that holds its initializes and
    each a tuple of ``width`` values (with None: of one width); [] when one is not, or the
    helper yields.  Given ``early`` (and ``width``), a return before that ``if`` that may hand
    back a disabled GradScaler (``_early_returns``) goes there instead of refusing."""
    parents = rule.parents
    body = list(helper.body.body) if isinstance(helper.body, cst.IndentedBlock) else []
    anchors = {outermost_if(parents, init.stmt) for init in inits}
    if len(anchors) != 1 or next(iter(anchors)) not in body:
        return []
    after = body.index(next(iter(anchors)))
    returns: List[cst.Return] = []
    for node in walk(helper):
        if isinstance(node, (cst.Yield, cst.Await)):
            return []
        if not isinstance(node, cst.Return) or enclosing(parents, node, (cst.FunctionDef, cst.Lambda)) is not helper:
            continue
        top = next(p for p in [node] + _ancestors(parents, node) if parents.get(p) is helper.body)
        value = node.value
        if (
            early is not None
            and width is not None
            and body.index(top) < after
            and early_return_ok(parents, helper, node, width)
        ):
            early.append(node)
            continue
        if body.index(top) <= after or not isinstance(value, cst.Tuple):
            return []
        width = len(value.elements) if width is None else width
        if len(value.elements) != width or any(isinstance(e, cst.StarredElement) for e in value.elements):
            return []
        returns.append(node)
    return returns


def _branches_around(parents, node: Any) -> Optional[Dict[Any, int]]:
    """Each if/elif/else chain around ``node`` in its function (by the chain's first ``if``)
    -> the branch ``node`` is in (0: the ``if``, 1: the first ``elif`` or the ``else``, ...);
    None when a loop lies between them (its branches could all run, one per iteration)."""
    found: Dict[Any, int] = {}
    cur = node
    while cur in parents:
        parent = parents[cur]
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(parent, (cst.For, cst.While)):
            return None
        owner, index = None, 0
        if isinstance(parent, cst.If) and parent.body is cur:
            owner = parent
        elif isinstance(parent, cst.Else) and isinstance(parents.get(parent), cst.If):
            owner, index = parents[parent], 1
        if owner is not None:
            while isinstance(parents.get(owner), cst.If) and parents[owner].orelse is owner:
                owner, index = parents[owner], index + 1
            found[owner] = index
        cur = parent
    return found


def _alternatives(parents, inits: List[InitSite]) -> bool:
    """Whether at most one of ``inits`` runs: all in one function, each pair in different
    branches of one if/elif/else chain, and no loop around any of them there."""
    if len({init.func for init in inits}) != 1:
        return False
    paths = []
    for init in inits:
        path = _branches_around(parents, init.stmt)
        if path is None:
            return False
        paths.append(path)
    return all(
        any(chain in b and b[chain] != index for chain, index in a.items())
        for i, a in enumerate(paths)
        for b in paths[i + 1 :]
    )


def is_main_guard(parents, node: Any) -> bool:
    """Whether ``node`` is the script's entry guard, a module-level ``if __name__ ==
    "__main__":`` (either way round): its body is the script itself, so it is no condition
    around an initialize (a GradScaler created after it would come after the training)."""
    if not (isinstance(node, cst.If) and isinstance(parents.get(node), cst.Module)):
        return False
    test = node.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = [test.left, target.comparator]
    return any(isinstance(x, cst.Name) and x.value == "__name__" for x in sides) and any(
        string_value(x) == "__main__" for x in sides
    )


def exiting_try(owner: Any, block: Any) -> bool:
    """``owner`` is a ``try:`` whose body is ``block`` and whose every ``except`` handler ends
    in a ``return`` or ``raise`` (``try: model, opt = amp.initialize(...)`` / ``except
    Exception: print(e); return``), without ``finally``: code after it runs only once the
    body ran to its end."""
    if not (isinstance(owner, cst.Try) and owner.body is block and owner.handlers and owner.finalbody is None):
        return False
    for handler in owner.handlers:
        body = handler.body
        last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
        small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
        if not isinstance(small, (cst.Return, cst.Raise)):
            return False
    return True


def ifs_around(parents, stmt: Any) -> List[cst.If]:
    """The ``if`` statements whose branches hold ``stmt``, innermost first, with the earlier
    links of an if/elif chain (whose tests failed) after the link that holds it; the
    script's ``__main__`` guard is not one of them."""
    found: List[cst.If] = []
    cur = stmt
    while True:
        block = parents.get(cur)
        owner = parents.get(block) if block is not None else None
        if isinstance(owner, cst.Else):
            owner = parents.get(owner)
        elif not (isinstance(owner, cst.If) and owner.body is block) or is_main_guard(parents, owner):
            return found
        found.append(owner)
        while isinstance(parents.get(owner), cst.If) and parents[owner].orelse is owner:
            owner = parents[owner]
            found.append(owner)
        cur = owner


def outermost_if(parents, stmt: Any) -> Any:
    """The outermost statement holding ``stmt`` through if/elif/else branches only."""
    ifs = ifs_around(parents, stmt)
    return ifs[-1] if ifs else stmt


def _assigned_texts(stmt: Any, skip: Any) -> Set[str]:
    """The names, attributes and items (``flag``, ``self.ready``, ``state["done"]``) that
    ``stmt`` or anything in it but ``skip`` assigns, augmented or annotated assignments and
    walrus targets included."""
    out: Set[str] = set()
    skipped = {id(n) for n in walk(skip)}
    for node in walk(stmt):
        if id(node) in skipped:
            continue
        targets: List[Any] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
            targets = [node.target]
        while targets:
            target = targets.pop()
            if isinstance(target, (cst.Tuple, cst.List)):
                targets.extend(e.value for e in target.elements)
            elif isinstance(target, cst.StarredElement):
                targets.append(target.value)
            elif isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
                out.add(code_of(target))  # ``self.ready``, not the ``self`` it is set on
    return out


def _guard_set_by_its_branch(parents, site: InitSite, inits: Sequence[InitSite] = ()) -> Optional[str]:
    """Why the scaler's switch cannot be the tests around the initialize: one of them reads
    what the ``if`` around it assigns (``if not self.amp_ready: ...initialize...;
    self.amp_ready = True``, a run-once guard).  The GradScaler is created after the
    outermost ``if`` with those tests as its switch; there the test has flipped, so the
    scaler would be created disabled (fp32 training without a word), and on every later
    call.  None when no test reads what the ``if`` assigns (the initialize's own targets,
    the same model and optimizer back, do not count)."""
    found = _stale_test(parents, site, inits)
    if found is None:
        # several training initializes in a loop are refused as such ("called for training more
        # than once"): one reason is enough
        return _guard_the_loop_rebinds(parents, site) if len(inits) <= 1 else None
    test, read = found
    return (
        f"the test `{code_of(test)}` around amp.initialize reads {read}, which its own branch assigns "
        "(a run-once guard): a GradScaler created after that if with this test as its switch would be "
        "disabled"
    )


def _guard_the_loop_rebinds(parents, site: InitSite) -> Optional[str]:
    """Why the scaler's switch cannot be the tests around the initialize: the ``if`` sits in
    a loop that assigns what one of its tests reads (``for epoch in ...: if epoch == start:
    ...initialize...``, setup on the first pass).  The GradScaler, created after the ``if``
    in the loop's body with those tests as its switch, would be created anew and disabled on
    every pass where the test fails, while apex stayed initialized: those passes would train
    in float32 without a word.  None when no enclosing loop of the function assigns what the
    tests read, or when that ``if`` is the setup pass that creates the optimizer too
    (``_amp_setup_pass``): then ``site`` is moved into its body."""
    ifs = ifs_around(parents, site.stmt)
    if not ifs:
        return None
    loops = _loops_rebinding(parents, ifs[-1], site.stmt)
    for loop, rebound in loops:
        for test in (link.test for link in ifs):
            read = next((text for text in _read_texts(test) if text in rebound), None)
            if read is None:
                continue
            stale = [link for link in ifs if any(set(_read_texts(link.test)) & r for _, r in loops)]
            holder = setup_pass(parents, site, stale, enclosing_function(parents, site.stmt))
            below = [i for i, guard in enumerate(site.guards) if guard is stale[0].test]
            head = f"for {code_of(loop.target)} in ..." if isinstance(loop, cst.For) else "while ..."
            why = (
                f"the test `{code_of(test)}` around amp.initialize reads {read}, which the loop around "
                f"it (`{head}`) assigns anew on each pass: a GradScaler created after that if with this "
                "test as its switch would be disabled on the passes where it fails, while apex stayed "
                "initialized"
            )
            if holder is not None and below:
                site.setup_if, site.anchor, site.guards = stale[0], holder, site.guards[below[0] + 1 :]
                site.setup_why = why
                return None
            return why
    return None


def _loops_rebinding(parents, top: Any, skip: Any) -> List[Tuple[Any, Set[str]]]:
    """The loops of the function around ``top``, innermost first, each with what it assigns
    on each pass (its target, what its body but ``skip`` assigns)."""
    found: List[Tuple[Any, Set[str]]] = []
    cur = parents.get(top)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(cur, (cst.For, cst.While)):
            rebound = _assigned_texts(cur.body, skip=skip)
            if isinstance(cur, cst.For):
                rebound |= _assigned_texts(cst.Assign([cst.AssignTarget(cur.target)], cst.Name("_")), skip=cst.Pass())
            found.append((cur, rebound))
        cur = parents.get(cur)
    return found


def stale_flag(parents, site: InitSite) -> Optional[str]:
    """The flag of the run-once guard around ``site`` (``self.amp_ready``), if there is one."""
    found = _stale_test(parents, site)
    return found[1] if found is not None else None


def _stale_test(
    parents, site: InitSite, inits: Sequence[InitSite] = ()
) -> Optional[Tuple[cst.BaseExpression, str]]:
    """The first test around the initialize that reads what its outermost ``if`` assigns,
    and what it reads there.  The targets of an initialize of ``inits`` on another branch of
    the same chain (``if D is None: model, G = amp.initialize(model, G)`` / ``else: model,
    [G, D] = amp.initialize(model, [G, D])``) do not count: one of the two runs, each giving
    the same model back."""
    ifs = ifs_around(parents, site.stmt)
    if not ifs:
        return None
    assigned = _assigned_texts(ifs[-1], skip=site.stmt)
    for other in inits:
        if other is not site and _other_branch(ifs, site.stmt, other.stmt):
            assigned -= _assigned_texts(other.stmt, skip=site.stmt)
    for test in (link.test for link in ifs):
        read = next((text for text in _read_texts(test) if text in assigned), None)
        if read is not None:
            return test, read
    return None


def _other_branch(ifs: Sequence[cst.If], stmt: Any, other: Any) -> bool:
    """Whether ``stmt`` and ``other`` lie in the body and the ``else`` of one of ``ifs``."""
    for link in ifs:
        if link.orelse is None:
            continue
        body = {id(n) for n in walk(link.body)}
        orelse = {id(n) for n in walk(link.orelse)}
        if (id(stmt) in body and id(other) in orelse) or (id(other) in body and id(stmt) in orelse):
            return True
    return False


def _read_texts(test: cst.BaseExpression) -> List[str]:
    """The names and attributes ``test`` reads, ``getattr(obj, "name", ...)`` and
    ``hasattr(obj, "name")`` as ``obj.name``."""
    out = []
    members = {id(n.attr) for n in walk(test) if isinstance(n, cst.Attribute)}
    for node in walk(test):
        if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) and id(node) not in members:
            out.append(code_of(node))
        elif (
            isinstance(node, cst.Call)
            and code_of(node.func) in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1].value, cst.SimpleString)
            and isinstance(node.args[1].value.evaluated_value, str)
        ):
            out.append(f"{code_of(node.args[0].value)}.{node.args[1].value.evaluated_value}")
    return out


def _no_use_among_alternatives(rule, inits: List[InitSite], uses: List[Any], info: AmpFile) -> None:
    """The scaler of alternative initializes exists only once the if/else that chooses
    between them is over: a use inside it is not proven to see one."""
    anchor = outermost_if(rule.parents, inits[0].stmt)
    for node in uses:
        if any(p is anchor for p in _ancestors(rule.parents, node)):
            info.blockers.append(
                Blocker(node, "this site is inside the if/else that chooses between the amp.initialize calls")
            )


def _conditional_call(rule, method: cst.FunctionDef, cls: cst.ClassDef) -> Optional[cst.If]:
    """The ``if`` around a call ``self.<method>(...)`` in a method of ``cls`` (XLM's
    ``if params.amp >= 0: self.init_amp()``), if there is such a call."""
    name = method.name.value
    for other in methods_of(cls):
        if class_of_method(rule.parents, other) is not cls:
            continue
        me = self_name(other)
        for node in walk(other.body):
            if isinstance(node, cst.Call) and code_of(node.func) == f"{me}.{name}":
                guard = enclosing(rule.parents, node, (cst.If, cst.FunctionDef))
                if isinstance(guard, cst.If):
                    return guard
    return None


def _fallback_before(
    rule, method: cst.FunctionDef, cls: cst.ClassDef, guard: cst.If, needy: List[Any], scaler_name: str
) -> Tuple[Optional[cst.BaseStatement], str]:
    """XLM's ``if params.amp >= 0: self.init_amp()`` in ``__init__``: every instance gets a
    scaler when ``__init__`` creates a disabled one before the statement of its body that
    holds that ``if`` (the fp32 path then runs exactly as apex's did without initialize).
    That statement, when this is provable: ``self.<method>(...)`` is called exactly once in
    the class, from ``__init__``, nothing else in the class names the method, and before that
    statement ``__init__`` neither returns nor calls a method that uses the scaler.  Else
    None and why not."""
    name = method.name.value
    otherwise = f"the other methods would find no self.{scaler_name} otherwise"
    init = init_method(cls)
    if init is None or class_of_method(rule.parents, init) is not cls:
        return None, f"{otherwise} (the if is not in __init__)"
    if enclosing(rule.parents, guard, cst.FunctionDef) is not init:
        return None, f"{otherwise} (the if is not in __init__)"
    uses = [
        node
        for other in methods_of(cls)
        for node in walk(other)
        if (isinstance(node, cst.Name) and node.value == name and node is not method.name)
    ]
    calls = [
        node
        for node in walk(init.body)
        if isinstance(node, cst.Call) and code_of(node.func) == f"{self_name(init)}.{name}"
    ]
    if len(uses) != 1 or len(calls) != 1 or calls[0].func.attr is not uses[0]:  # type: ignore[attr-defined]
        return None, f"{otherwise} ({name} is named more than once in class {cls.name.value})"
    body = list(init.body.body) if isinstance(init.body, cst.IndentedBlock) else []
    top = next((s for s in body if s is guard or any(p is s for p in _ancestors(rule.parents, guard))), None)
    if top is None:
        return None, otherwise
    users = {f"{self_name(init)}.{f.name.value}" for f in needy if f is not None}
    for stmt in body[: body.index(top)]:
        for node in walk(stmt):
            if isinstance(node, cst.Return) and enclosing(rule.parents, node, (cst.FunctionDef, cst.Lambda)) is init:
                return None, f"{otherwise} (__init__ may return before that if)"
            if isinstance(node, cst.Attribute) and code_of(node) in users:
                return None, f"__init__ calls {code_of(node)}() before that if, and it uses the scaler"
    return top, ""


def _plain_creation(training: List[InitSite], info: AmpFile, per_method: bool) -> bool:
    """One initialize whose GradScaler is made once, beside it (no alternative branches, no
    disabled one made elsewhere first, no carrier): the one that may be made earlier."""
    return (
        len(training) == 1
        and not per_method
        and not info.alternatives
        and not info.scaler_in_branch
        and info.fallback is None
        and info.run_once is None
        and info.carrier is None
    )


def _used_after_its_loop(rule, init: InitSite, uses: List[Any], info: AmpFile) -> None:
    """An initialize in a loop that does more than initialize (``_amp_setup_loop``) creates its
    GradScaler in that loop, afresh each pass, as apex replaced its loss scaler; a use of the
    scaler after the loop would find none when the loop ran no pass or skipped the
    initialize: refused, with the use named."""
    loop = enclosing(rule.parents, init.anchor, (cst.For, cst.While, cst.FunctionDef))
    if not isinstance(loop, (cst.For, cst.While)):
        return
    for node in uses:
        if not any(p is loop for p in _ancestors(rule.parents, node)):
            info.blockers.append(
                Blocker(
                    node,
                    f"amp.initialize runs inside the loop at line {rule.line_of(loop)}, which does more than "
                    "initialize, and the GradScaler is used after it",
                )
            )


def _scaler_before_the_if(rule, init: InitSite, uses: List[Any], info: AmpFile) -> None:
    """The scaler normally goes after the ``if`` that holds the initialize, so it exists on
    every path; a use inside that ``if`` (``model, opt = amp.initialize(...)`` then
    ``loss_scaler = ApexScaler(...)`` in the same branch) needs it before the ``if``, which
    is right only when the scaler's arguments use no name the ``if`` assigns."""
    if init.anchor is init.stmt:
        return
    inside = [n for n in uses if any(p is init.anchor for p in _ancestors(rule.parents, n))]
    if not inside:
        return
    needed = {name for node in option_values(init.call) + list(init.guards) for name in names_in(node)}
    assigned = {
        name
        for node in walk(init.anchor)
        if isinstance(node, cst.SimpleStatementLine)
        and node is not init.stmt
        and (info.carrier is None or node is not info.carrier.store)  # it stores on the carrier only
        for name in assigned_names(node)
    }
    clash = sorted(needed & assigned)
    if clash:
        for node in inside:
            info.blockers.append(
                Blocker(node, f"the GradScaler cannot be created before this if: it needs {', '.join(clash)}")
            )
        return
    init.scaler_first = True


def _ancestors(parents, node: Any) -> List[Any]:
    found, cur = [], node
    while cur in parents:
        cur = parents[cur]
        found.append(cur)
    return found


def plan_note(rule, info: AmpFile, node: Any) -> Optional[str]:
    """The cross-file plan's reason why the top-level definition holding ``node`` gets no
    GradScaler from another file, if it gave one."""
    if info.plan is None:
        return None
    parents = rule.parents
    cur: Any = node
    while cur in parents and not isinstance(parents[cur], cst.Module):
        cur = parents[cur]
    name = cur.name.value if isinstance(cur, (cst.FunctionDef, cst.ClassDef)) else MODULE_LEVEL
    return info.plan.note_for(name)


def _check_reader_layout(rule, info: AmpFile) -> None:
    """A reader of the module-scaler route (APX252): every site reads the home module's
    GradScaler(s) through its dotted name when it runs; a site at module level would run on
    import, before any initialize, and is refused."""
    for site in info.scale_losses:
        if site.func is not None and _plain_backward_beside(site, info):
            _find_sibling_steps(rule, site, info)
        _check_steps(rule, site, info)
        why = _mirrored_steps(rule, site, info) if site.func is not None and _plain_backward_beside(site, info) else ""
        if why:
            info.blockers.append(Blocker(site.with_stmt, (
                f"{site.func.name.value}() also runs a plain backward: whether its test is the switch of the "
                "GradScaler the initializing module makes is not followed, and a plain backward stepped through an "
                f"enabled GradScaler would have its gradients divided by the loss scale ({why})"
            )))
    expr = f"{info.plan.reader_access}.{info.scaler_name}"
    callers = [c for s in info.scale_losses for c in s.sibling_callers]  # their forward gets the autocast
    for func in dict.fromkeys([s.func for s in info.scale_losses] + [n.func for n in info.needs] + callers):
        if func is None:
            node = next((s.with_stmt for s in info.scale_losses if s.func is None), None) or next(
                n.node for n in info.needs if n.func is None
            )
            info.blockers.append(Blocker(node, "this runs at module level, on import, before any amp.initialize"))
            continue
        info.access[func] = expr


def _find_sibling_steps(rule, site: ScaleLossSite, info: AmpFile) -> None:
    """vissl's train step: no step follows the scaled backward in its function, and the
    caller steps in a sibling function (``_amp_sibling_step``): recorded on ``site``."""
    if len(site.optimizers) != 1 or find_steps(rule, site, code_of(site.optimizers[0])):
        return

    def heir(func: Any) -> str:
        cls = rule.parents.get(rule.parents.get(func))
        if not isinstance(cls, cst.ClassDef):
            return ""
        if info.plan is not None:
            return next((w for c, m, w in info.plan.overridden if (c, m) == (cls.name.value, func.name.value)), "")
        for node in walk(rule.tree):
            if (
                isinstance(node, cst.ClassDef)
                and any(code_of(b.value) == cls.name.value for b in node.bases)
                and any(m.name.value == func.name.value for m in methods_of(node))
            ):
                return node.name.value
        return ""

    found, why, callers = sibling_steps(rule, site.func, site.with_stmt, site.optimizers[0], heir)
    if found:
        site.sibling = {call: (orelse, test) for call, orelse, test in found}
        site.sibling_callers = callers
        site.exit_unscale = True
    else:
        site.sibling_why = why


def _mirrored_steps(rule, site: ScaleLossSite, info: AmpFile) -> str:
    """mmgeneration's train step: the scaled backward is one clause of an if-chain whose other
    clauses hold the plain backwards (``if loss_scaler: ... elif use_apex_amp: <scale> else:
    loss.backward()``), and each step of its optimizers is alone in the ``else`` of a later
    chain with the same leading tests: that step gets ``elif <the scale clause's test>:``
    stepping through the GradScaler, and the plain runs (where the module's GradScaler is
    None) keep the plain step (``_amp_mirrored_step``).  FARM's trainer steps on one line
    after that chain, for either backward: the line goes under the scaling clause's test
    (``_amp_shared_step``).  Records them in ``info.mirrored_steps`` and
    ``info.shared_steps``; why not ("" when every step is mirrored or shared)."""
    clause = scale_clause(rule.parents, site.with_stmt, site.func)
    if clause is None:
        return "the scaled backward is under no if"
    # every plain backward of the function is in another clause of the chain of one of its
    # scaled backwards
    beside: Set[int] = set()
    for other in info.scale_losses:
        found = scale_clause(rule.parents, other.with_stmt, other.func) if other.func is site.func else None
        if found is not None:
            beside |= {id(n) for n in walk(chain_tests(rule.parents, found)[0])} - {id(n) for n in walk(found.body)}
    scaled = {id(n) for s in info.scale_losses for n in walk(s.with_stmt)}
    for node in walk(site.func.body):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "backward"
            and id(node) not in scaled
            and id(node) not in beside
        ):
            return f"{code_of(node)} is not in another branch of an if-chain that scales a loss"
    if site.sibling:
        info.mirrored_steps.update(site.sibling)
        return ""
    found, shared = {}, {}
    for opt in site.optimizers:
        for call in find_steps(rule, site, code_of(opt)):
            last, why = mirrored_guard(rule.parents, site.func, site.with_stmt, call)
            if last is not None:
                found[call] = (last.orelse, clause.test)
                continue
            if why == NOT_IN_ELSE:
                # a step after the chain, for either backward: under the scaling clause's test
                line, test, why = shared_guard(rule.parents, site.func, site.with_stmt, call)
                if line is not None:
                    shared[call] = (line, test)
                    continue
            return f"{code_of(call)}: {why}"
    if not found and not shared:
        return "no step of its optimizers follows it" + (f", and {site.sibling_why}" if site.sibling_why else "")
    if shared:
        why = gradient_uses(rule.parents, site.func, chain_tests(rule.parents, clause)[0], clause.test)
        if why:
            return why
    info.mirrored_steps.update(found)
    info.shared_steps.update(shared)
    return ""


def _narrowed_steps(rule, info: AmpFile) -> None:
    """cascade-stereo's ``if is_distributed and args.using_apex: <scale> else: loss.backward()``
    under an initialize switched by ``args.using_apex`` alone: each step after that if-chain
    goes under its test (``_amp_narrowed_step``), recorded in ``info.shared_steps``; where it
    cannot, a blocker while the initialize is still in the file."""
    state = rule.file_state()
    if info.training_inits:
        found = {switch_conditions(rule.parents, ifs_around(rule.parents, s.stmt), s.stmt) for s in info.training_inits}
        state[SWITCH_KEY] = found.pop() if len(found) == 1 else None
    switch = state.get(SWITCH_KEY)
    for site in info.scale_losses:
        clause = scale_clause(rule.parents, site.with_stmt, site.func) if site.func is not None else None
        if clause is None or not narrower(clause.test, switch) or not _plain_backward_beside(site, info):
            continue
        shown = code_of(clause.test).strip()
        why = ""
        shared = {}
        for opt in site.optimizers:
            for call in find_steps(rule, site, code_of(opt)):
                if call in info.shared_steps or call in info.mirrored_steps:
                    continue
                line, test, why = shared_guard(rule.parents, site.func, site.with_stmt, call)
                if line is None:
                    why = f"{code_of(call)}: {why}"
                    break
                shared[call] = (line, test)
            if why:
                break
        if not why and shared:
            why = gradient_uses(rule.parents, site.func, chain_tests(rule.parents, clause)[0], clause.test)
        if not why:
            info.shared_steps.update(shared)
        elif info.training_inits:
            info.blockers.append(Blocker(site.with_stmt, (
                f"{site.func.name.value}() scales the loss only if {shown}, fewer runs than the GradScaler is "
                "switched on for, and runs a plain backward otherwise, which a GradScaler cannot step "
                f"({why})"
            )))


def _plain_backward_beside(site: ScaleLossSite, info: AmpFile) -> bool:
    """``if use_amp: with amp.scale_loss(...) ... else: loss.backward()``: the function of
    ``site`` calls ``.backward()`` outside every amp.scale_loss block."""
    blocks = [id(n) for s in info.scale_losses if s.func is site.func for n in walk(s.with_stmt)]
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward"
        and id(n) not in blocks
        for n in walk(site.func.body)
    )


def _check_remote_layout(rule, info: AmpFile) -> None:
    """A file whose scaler comes from another file: every site must be reached from the
    plan's entry definitions (directly, through ``self``, or threaded through same-file
    calls)."""
    for site in info.scale_losses:
        _check_steps(rule, site, info)
    needy = [s.func for s in info.scale_losses] + [n.func for n in info.needs]
    needy += [enclosing_function(rule.parents, c) for calls in info.class_threaded.values() for c in calls]
    home_cls = info.received_class
    home = next((f for f in info.received if class_of_method(rule.parents, f) is home_cls), None) if home_cls else None
    for func in info.entry_functions:
        _access(rule, func, home, home_cls, info, set())
    for func in dict.fromkeys(needy):
        if _access(rule, func, home, home_cls, info, set()) is None:
            node = next((s.with_stmt for s in info.scale_losses if s.func is func), None) or next(
                n.node for n in info.needs if n.func is func
            )
            name = func.name.value if func is not None else "module level"
            info.blockers.append(
                Blocker(node, f"the GradScaler passed in from another file cannot be passed on to {name}")
            )
    for func, assign in info.received.items():
        line = rule.line_of(assign)
        early: List[Any] = [
            c for calls in info.threaded.values() for c in calls if enclosing_function(rule.parents, c) is func
        ]
        early += [s.with_stmt for s in info.scale_losses if s.func is func]
        early += [n.node for n in info.needs if n.func is func]
        if func is not None and func is home:
            # a method __init__ calls on self before the call (or one that calls it so): it
            # would run without the GradScaler
            using = _methods_reaching(cast(cst.ClassDef, home_cls), {f.name.value for f in needy if f is not None})
            early += [c for c, name in _self_calls(func) if name in using]
        for node in early:
            if rule.line_of(node) < line:
                made = code_of(cast(cst.Call, assign.value).func)
                info.blockers.append(Blocker(node, f"this comes before {made}() returns the GradScaler it would use"))


def _self_calls(func: cst.FunctionDef) -> List[Tuple[cst.Call, str]]:
    """The ``self.<method>(...)`` calls in a method: (call, method name)."""
    me = self_name(func) if func.params.params else ""
    return [
        (n, n.func.attr.value)
        for n in walk(func)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and code_of(n.func.value) == me
    ]


def _methods_reaching(cls: cst.ClassDef, names: Set[str]) -> Set[str]:
    """``names`` and the methods of ``cls`` that call one of them on self, directly or not."""
    calls = {m.name.value: {name for _c, name in _self_calls(m)} for m in methods_of(cls)}
    found, grew = set(names), True
    while grew:
        more = {m for m, called in calls.items() if m not in found and called & found}
        found |= more
        grew = bool(more)
    return found


def find_steps(rule, site: ScaleLossSite, opt_text: str) -> List[cst.Call]:
    """The ``<opt>.step()`` calls a scale_loss site feeds: in its own function, else (for
    ``self.<opt>``) in the other methods of its class, else in the callers of its function
    (``caller_steps``)."""
    body = site.func.body if site.func is not None else rule.tree
    calls = step_calls(body, opt_text) + _loop_steps(rule, body, opt_text, site)
    if opt_text in site.handed:
        calls += step_calls(body, site.handed[opt_text][0])
    if opt_text in site.delegated:
        calls += step_calls(body, site.delegated[opt_text])
    for alias in optimizer_aliases(rule, site, opt_text):
        calls += step_calls(body, alias)
    calls = [c for c in calls if not _runs_before(rule, c, site.with_stmt) or _later_call_steps(rule, c, site)]
    # steps only in the other branch of the `if` that scales (`if fp16: <scale_loss>;
    # self._step_hook() else: loss.backward(); opt.step()`) do not step this backward's
    # gradients: look on for the step the scaled branch reaches, keeping those too
    other_branch = [c for c in calls if off_path(rule, c, site)]
    if other_branch and len(other_branch) == len(calls):
        calls = []
    cls = class_of_method(rule.parents, site.func)
    if not calls and cls is not None and opt_text.startswith(self_name(site.func) + "."):
        for method in methods_of(cls):
            if (
                method is not site.func
                and class_of_method(rule.parents, method) is cls
                and self_name(method) == self_name(site.func)
            ):
                calls.extend(step_calls(method.body, opt_text) + _loop_steps(rule, method.body, opt_text, site))
    if not calls:
        calls = caller_steps(rule, site, opt_text)
    if not calls and site.sibling:
        calls = list(site.sibling)
    return other_branch + [c for c in calls if c not in other_branch]


def off_path(rule, call: cst.Call, site: ScaleLossSite) -> bool:
    """``call`` is in another branch of an if/try than the site's scaled backward, so it never
    runs after it on one call of the function (XLM's step for a delayed backward, taken on a
    later call, is on its path)."""
    return exclusive(rule.parents, call, site.with_stmt) and not _later_call_steps(rule, call, site)


def optimizer_aliases(rule, site: ScaleLossSite, opt_text: str) -> List[str]:
    """``optimizer = self.optimizer`` at the top of the function, before the amp.initialize
    that rebinds ``optimizer`` (apex gives back the optimizer object it was handed): the two
    names denote one object there, so ``self.optimizer.step()`` steps the loss scale_loss
    scaled.  Only where nothing else in the function, nested functions included, binds either
    name (or the attribute's base); else no alias."""
    func = site.func
    if func is None or not opt_text.isidentifier():
        return []
    params = func.params
    if any(p.name.value == opt_text for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return []
    alias_stmt, source = None, ""
    for stmt in func.body.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and code_of(small.targets[0].target) == opt_text
            and isinstance(small.value, (cst.Name, cst.Attribute))
        ):
            alias_stmt, source = stmt, code_of(small.value)
            break
    if alias_stmt is None or rule.line_of(alias_stmt) >= rule.line_of(site.with_stmt):
        return []
    guarded = {opt_text, source, source.split(".")[0]}
    for node in walk(func.body):
        if node is alias_stmt:
            continue
        if isinstance(node, cst.SimpleStatementLine):
            bound = assigned_names(node) & guarded
            small = node.body[0] if len(node.body) == 1 else None
            rebinds_by_apex = (
                bound == {opt_text}
                and isinstance(small, cst.Assign)
                and isinstance(small.value, cst.Call)
                and "apex.amp.initialize" in rule.qualified_names(small.value.func)
            )
            if bound and not rebinds_by_apex:
                return []
        elif isinstance(node, (cst.For, cst.CompFor)) and names_in(node.target) & guarded:
            return []
        elif isinstance(node, cst.WithItem) and node.asname is not None and names_in(node.asname) & guarded:
            return []
        elif isinstance(node, (cst.Global, cst.Nonlocal)) and {n.name.value for n in node.names} & guarded:
            return []
    return [source]


def exclusive(parents: Any, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` and ``b`` sit in different branches of one if/try (never both run)."""
    ancestors = set()
    cur: Any = a
    while cur is not None:
        ancestors.add(cur)
        cur = parents.get(cur)
    cur = b
    while cur is not None and cur not in ancestors:
        cur = parents.get(cur)
    return cur is not None and not isinstance(cur, (cst.IndentedBlock, cst.Module))


def _later_call_steps(rule, call: cst.Call, site: ScaleLossSite) -> bool:
    """``if boundary: <scale_loss>; opt.step() else: <scale_loss delay_unscale=True>`` (XLM):
    the delayed backward leaves its gradients for the step the other branch takes on a
    later call of the function; only with a literal ``delay_unscale=True``, the apex way of
    saying so."""
    delay = arg_value(site.call, 4, "delay_unscale")
    if not (isinstance(delay, cst.Name) and delay.value == "True"):
        return False
    # the two branches of the `if` nearest the delayed backward (an outer `if`, such as
    # XLM's fp32 branch beside its amp one, is another configuration, not a later call)
    branch = enclosing(rule.parents, site.with_stmt, (cst.If, cst.FunctionDef))
    if not isinstance(branch, cst.If) or enclosing_function(rule.parents, call) is not site.func:
        return False
    around = set(_ancestors(rule.parents, site.with_stmt))
    common = next((p for p in _ancestors(rule.parents, call) if p in around), None)
    if isinstance(common, cst.Else):
        common = rule.parents.get(common)
    return common is branch


def accumulation_boundary(parents: Any, with_stmt: cst.CSTNode, step: cst.CSTNode) -> Optional[cst.If]:
    """The ``if`` that lets ``step`` run on only some iterations of the loop holding both
    ``with_stmt`` (a scale_loss block) and ``step``, in the same function: a gradient
    accumulation boundary (``if (i + 1) % accum == 0: opt.step()``); None when the step runs
    whenever the backward does, or the two are in no common loop."""
    loop: Any = parents.get(with_stmt)
    while loop is not None and not isinstance(loop, (cst.For, cst.While)):
        if isinstance(loop, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        loop = parents.get(loop)
    if loop is None:
        return None
    # the tests the scale_loss block itself is under (``if args.fp16:``) are no boundary
    # when the step is under the same test
    backward_tests = set()
    cur: Any = parents.get(with_stmt)
    while cur is not None and cur is not loop:
        if isinstance(cur, cst.If):
            backward_tests.add(code_of(cur.test).strip())
        cur = parents.get(cur)
    boundary = None
    cur = parents.get(step)
    while cur is not None and cur is not loop:
        if isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if (
            isinstance(cur, cst.If)
            and not inside(parents, with_stmt, cur)
            and code_of(cur.test).strip() not in backward_tests
        ):
            boundary = cur
        cur = parents.get(cur)
    return boundary if cur is loop else None


def stepping_loop(rule, call: cst.Call) -> Optional[cst.For]:
    """``for opt in optimizers: opt.step()``: the ``for`` whose target is the receiver of
    the step ``call`` (in the same function), else None."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not isinstance(receiver, cst.Name):
        return None
    cur: Any = call
    while cur in rule.parents:
        cur = rule.parents[cur]
        if isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(cur, cst.For) and isinstance(cur.target, cst.Name) and cur.target.value == receiver.value:
            return cur
    return None


def _loop_steps(rule, body: Any, opt_text: str, site: ScaleLossSite) -> List[cst.Call]:
    """The steps of a list of optimizers given whole to scale_loss (XLM's
    ``amp.scale_loss(loss, optimizers)``), taken one by one in a loop after it:
    ``for optimizer in optimizers: optimizer.step()``."""
    found: List[cst.Call] = []
    for node in walk_of(body, cst.For):
        if (
            isinstance(node.target, cst.Name)
            and code_of(node.iter) == opt_text
            and not is_nested_in(rule.parents, site.with_stmt, node)
        ):
            found.extend(c for c in step_calls(node.body, node.target.value) if stepping_loop(rule, c) is node)
    return found


@dataclass(eq=False, repr=False)
class CallerLink:
    """A call of the function that holds a scale_loss, in another function of the file:
    ``optimizers`` maps each optimizer the scale_loss names (a parameter there) to the
    expression the call passes for it."""

    call: cst.Call
    func: cst.FunctionDef
    optimizers: Dict[str, str]


def caller_links(rule, site: ScaleLossSite) -> Optional[List[CallerLink]]:
    """The calls of a module-level function that scales a loss over optimizers it takes as
    parameters (``def backward_chunk(model, x, optimizer): with amp.scale_loss(loss,
    optimizer)``), each with what it passes for them; None when the function is used other
    than by calls inside functions, reassigns such a parameter, or a call's argument is
    not a plain name or attribute.  A method's calls are followed too where they are all
    ``self.<method>(...)`` in methods of its class (``_self_callers``)."""
    func = site.func
    if func is None:
        return None
    method = not isinstance(rule.parents.get(func), cst.Module)
    calls = _self_callers(rule, func) if method else _callers(rule, func)
    if not calls:
        return None
    params = func.params
    if isinstance(params.star_arg, cst.Param):
        return None  # (a bare ``*`` or a ``**kwargs`` leaves the mapping of the named ones as it is)
    positional = [p.name.value for p in list(params.posonly_params) + list(params.params)]
    reassigned: Set[str] = set()
    for node in walk_of(func.body, cst.SimpleStatementLine, cst.For, cst.AsName):
        if type(node) is cst.SimpleStatementLine:
            reassigned |= assigned_names(node)
        else:
            reassigned |= names_in(node.target if type(node) is cst.For else node.name)
    wanted = []
    for opt in site.optimizers:
        text = code_of(opt)
        if not isinstance(opt, cst.Name) or text not in positional + [p.name.value for p in params.kwonly_params]:
            return None
        if text in reassigned:
            return None
        wanted.append(text)
    links = []
    for call in calls:
        caller = enclosing_function(rule.parents, call)
        if caller is None or any(a.star for a in call.args):
            return None
        mapped: Dict[str, str] = {}
        shift = 1 if method else bound_offset(rule, call)  # a method's call binds self
        for text in wanted:
            index = positional.index(text) if text in positional else len(call.args) + 1 + shift
            if index < shift:
                return None  # the partial bound the optimizer: not what this call passes
            value = arg_value(call, index - shift, text)
            if not isinstance(value, (cst.Name, cst.Attribute)):
                return None
            mapped[text] = code_of(value)
        links.append(CallerLink(call, caller, mapped))
    return links


def _self_callers(rule, func: cst.FunctionDef) -> Optional[List[cst.Call]]:
    """Every call ``self.<method>(...)`` of the plain method ``func``, each in another method of
    its class through that method's own first parameter; None where the file names the
    method any other way (on another object, passed on, decorated), or unless the
    cross-file plan found no subclass redefining it and no other file calling a method of
    that name (``self_called_only``): then what steps the optimizer it is handed is not
    known."""
    cls = class_of_method(rule.parents, func)
    if cls is None or func.decorators or not func.params.params:
        return None
    name = func.name.value
    plan = rule.repo_plan()
    if plan is None or (cls.name.value, name) not in plan.self_called_only:
        return None
    calls = []
    for node in walk_of(rule.tree, cst.Attribute, cst.Name):
        if isinstance(node, cst.Name):
            if node.value == name and node is not func.name and not _is_member_name(rule.parents, node):
                return None
            continue
        if node.attr.value != name:
            continue
        call = rule.parents.get(node)
        caller = enclosing_function(rule.parents, node)
        if not (
            isinstance(call, cst.Call)
            and call.func is node
            and caller is not None
            and caller is not func
            and class_of_method(rule.parents, caller) is cls
            and isinstance(node.value, cst.Name)
            and node.value.value == self_name(caller)
        ):
            return None
        calls.append(call)
    return calls or None


def caller_steps(rule, site: ScaleLossSite, opt_text: str) -> List[cst.Call]:
    """The steps of ``opt_text`` a scale_loss site feeds through the callers of its
    function: ``<passed>.step()`` in each calling function, not before the call unless a
    loop holds both.  Empty unless every caller steps what it passed (a caller that never
    steps would leave scaled gradients behind, so nothing is proven)."""
    return _caller_steps(rule, site, opt_text)[0]


def _caller_steps(rule, site: ScaleLossSite, opt_text: str) -> Tuple[List[cst.Call], Optional[str]]:
    """``caller_steps`` and, when it finds none though the function has callers, which
    caller does not step (for the finding)."""
    links = caller_links(rule, site)
    if not links:
        return [], None
    found: List[cst.Call] = []
    helper = site.func.name.value if site.func is not None else ""
    for link in links:
        passed = link.optimizers.get(opt_text)
        name = link.func.name.value
        if passed is None or is_nested_in(rule.parents, link.func, site.func):
            return [], f"{name}() calls it from inside"
        steps = [c for c in step_calls(link.func.body, passed) if not _runs_before(rule, c, link.call)]
        steps = [c for c in steps if enclosing_function(rule.parents, c) is link.func]
        if not steps:
            return [], f"{name}(), which calls {helper}(), has no {passed}.step() after it"
        found.extend(c for c in steps if c not in found)
    return found, None


def _stepped_through_holder(rule, site: ScaleLossSite, opt_text: str) -> Optional[str]:
    """``optim.optim = opt`` in the function of ``site`` and ``optim.step()`` there: the
    optimizer is stepped through another object's method, which may do more than step it
    (a learning-rate warm-up) and which ``GradScaler.step`` cannot take (it needs the
    optimizer itself).  The words for the finding, or None."""
    if site.func is None:
        return None
    for node in walk(site.func.body):
        if not (isinstance(node, cst.Assign) and code_of(node.value) == opt_text):
            continue
        for target in node.targets:
            holder = target.target.value if isinstance(target.target, cst.Attribute) else None
            if holder is None:
                continue
            text = code_of(holder)
            if any(
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "step"
                and code_of(call.func.value) == text
                for call in walk(site.func.body)
            ):
                return (
                    f"{opt_text} is stored as {code_of(target.target)} and stepped through {text}.step(), "
                    "a method of that object, not here: GradScaler.step needs the optimizer itself, so that "
                    "method would have to step it through the scaler"
                )
    return None


def _loops_around(rule, node: Any) -> List[Any]:
    loops, cur = [], node
    while cur in rule.parents:
        cur = rule.parents[cur]
        if isinstance(cur, (cst.For, cst.While)):
            loops.append(cur)
    return loops


def _runs_before(rule, call: cst.Call, backward: Any) -> bool:
    """A step of the same function that comes before the scaled backward (``backward``: the
    scale_loss statement, or the call of the function holding it) and shares no loop
    with it (``optimizer.zero_grad(); optimizer.step()`` before the training loop, a warm-up
    some repositories use): no gradient exists yet, so it stays a plain ``optimizer.step()``
    (``GradScaler.step`` there raises: no scale, no inf checks)."""
    if rule.line_of(call) >= rule.line_of(backward):
        return False
    return not set(_loops_around(rule, call)) & set(_loops_around(rule, backward))


def _keyed_rebound(rule, site: ScaleLossSite, opt: Any) -> str:
    """Why the steps of ``optimizer["d"]`` cannot be told by their text: the function of the
    site assigns to ``optimizer`` or one of its items (other than through amp.initialize, which
    hands back the optimizers it was given), so the same text may name another optimizer at
    the step ("" when it does not)."""
    if not keyed_optimizer(opt):
        return ""
    base = code_of(opt.value)
    body = site.func.body if site.func is not None else rule.tree
    for node in walk(body):
        if not isinstance(node, cst.SimpleStatementLine) or base not in assigned_names(node):
            continue
        initializes = any(
            isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "initialize"
            for n in walk(node)
        )
        if not initializes:
            # named by its function, not its line: the TODOs a run writes above it move that line
            where = f"in {site.func.name.value}()" if site.func is not None else "at module level"
            return (
                f"optimizers given as {code_of(opt)}: {base} or an item of it is assigned {where}, so at a "
                "step the same text may name another optimizer"
            )
    return ""


def methods_of(cls: cst.ClassDef) -> List[cst.FunctionDef]:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    return [s for s in body if isinstance(s, cst.FunctionDef)]


def _check_steps(rule, site: ScaleLossSite, info: AmpFile) -> None:
    for opt in site.optimizers:
        if not isinstance(opt, (cst.Name, cst.Attribute)) and not keyed_optimizer(opt):
            info.blockers.append(
                Blocker(site.call, f"optimizers given as {code_of(opt)}: cannot find their step() calls")
            )
            continue
        rebound = _keyed_rebound(rule, site, opt)
        if rebound:
            info.blockers.append(Blocker(site.call, rebound))
            continue
        calls = find_steps(rule, site, code_of(opt))
        if calls and all(off_path(rule, c, site) for c in calls):
            info.blockers.append(Blocker(site.with_stmt, (
                f"the only {code_of(opt)}.step() of this function is in another branch than this "
                "amp.scale_loss, so it never steps the gradients scaled here, and the step they reach was "
                "not found"
            )))
            continue
        for call in calls:
            func = enclosing_function(rule.parents, call)
            if func is not site.func:
                info.needs.append(Need(call, "step", func))
                plain = plain_step_path(rule, site, call, [s.with_stmt for s in info.scale_losses], _switch_of(rule, info))
                if plain:
                    info.blockers.append(Blocker(call, plain))
                heir = _overriding_heir(rule, func, info)
                if heir and not _override_stepped(rule, site, opt, func, info):
                    cls_name = class_of_method(rule.parents, func).name.value
                    gap = next((why for c, m, why in info.plan.override_step_gaps
                                if (c, m) == (cls_name, func.name.value)), "") if info.plan is not None else ""
                    info.blockers.append(Blocker(call, (
                        f"{code_of(call)} is in {cls_name}.{func.name.value}(), which {heir} overrides: a native "
                        "rewrite steps the base's through the GradScaler, but the override would still step the "
                        "scaled gradients itself (apex patched every optimizer.step)"
                        + (f"; nor can the tool edit the override: {gap}" if gap else "")
                    )))
        if not calls and (
            _stepped_by_heirs(rule, site, opt, info) or _stepped_by_binder(rule, site, info)
            or _stepped_by_base(rule, site, opt, info)
        ):
            continue
        launchers = stepped_helper(info.plan, site.func, rule.parents)
        if launchers is not None:
            shown = ", ".join(launchers)
            gap = helper_shape(site) if not calls else (
                f"{site.func.name.value}() steps {code_of(opt)} itself, and its callers in {shown} step what they "
                "hand it after each call")
            if isinstance(gap, str):
                info.blockers.append(Blocker(site.with_stmt, ROUTE.format(
                    helper=site.func.name.value, where="this file", caller=f"each call in {shown}") + gap))
            continue
        shape = input_gradient(rule, site)
        if shape is not None and not shape.stepped:
            if shape.magnitude:
                info.blockers.append(Blocker(site.with_stmt, input_gradient_refusal(shape)))
                continue
            if not calls:
                continue  # nothing of this backward reaches a step here (see ``_input_gradient``)
        if not calls:
            message = f"{code_of(opt)}.step() is not in the same function as amp.scale_loss"
            gap = (
                (info.plan.step_heir_refusal if info.plan is not None and info.plan.step_heir_refusal else None)
                or _stepped_through_holder(rule, site, code_of(opt))
                or _caller_steps(rule, site, code_of(opt))[1]
                or _holder_steps(rule, site, opt, info)
                or method_step_gap(rule, site.func, opt)
                or _method_parameter_gap(rule, site, opt)
            )
            gap = _base_step_gap(rule, site, opt, info) or gap
            if gap is None and site.func is not None and isinstance(rule.parents.get(site.func), cst.Module):
                gap = unreached_reason(rule, site.func, None, info) or None
                gap = f"its callers cannot be followed: {gap}" if gap else None
            info.blockers.append(Blocker(site.with_stmt, f"{message}, and {gap}" if gap else message))
        for call in calls:
            holder = rule.parents.get(call)
            if code_of(opt) in site.wrapped and isinstance(holder, cst.Expr):
                if any(a.keyword is None or a.keyword.value == "closure" for a in call.args):
                    info.blockers.append(
                        Blocker(call, f"{code_of(call)}: GradScaler.step passes no closure or positional arguments on")
                    )
            elif call.args or not isinstance(holder, cst.Expr):
                info.blockers.append(
                    Blocker(call, f"{code_of(call)}: only a plain optimizer.step() statement can go through the scaler")
                )


def _switch_of(rule, info: AmpFile) -> FrozenSet[str]:
    """The conditions the one training initialize of the file runs under (the GradScaler's
    switch), with the ``self.x`` its ``__init__`` stores each in; empty where there is none
    or several, or one of them is in an ``else``."""
    if len(info.training_inits) != 1:
        return frozenset()
    init = info.training_inits[0]
    found = switch_conditions(rule.parents, ifs_around(rule.parents, init.stmt), init.stmt) or frozenset()
    return frozenset(found) | {a for text in found for a in attribute_aliases(rule.parents, init.func, text)}


def _method_parameter_gap(rule, site: ScaleLossSite, opt: Any) -> Optional[str]:
    """``def _training_step(self, model, inputs, optimizer)`` scaling for its parameter
    ``optimizer``, whose calls ``caller_links`` could not follow: the words for the finding,
    or None."""
    func = site.func
    cls = class_of_method(rule.parents, func) if func is not None else None
    if cls is None or not isinstance(opt, cst.Name):
        return None
    params = func.params
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)][1:]
    if opt.value not in names:
        return None
    plan = rule.repo_plan()
    method = func.name.value
    key = (cls.name.value, method)
    redefined = next((w for c, m, w in plan.overridden if (c, m) == key), "") if plan else ""
    called = next((w for c, m, w in plan.scaling_called_elsewhere if (c, m) == key), "") if plan else ""
    where = f"{opt.value} is a parameter of {cls.name.value}.{method}(), a method"
    if redefined:
        return (f"{where} that {redefined} redefines: which optimizer a call of it hands on, and whether that one "
                "is stepped after, depends on the method that runs")
    if called:
        return f"{where}, and {called} calls a method of that name, whose step of what it hands on is not followed"
    if plan is None:
        return (f"{where}: its calls on self are followed to their steps only where the run sees the whole "
                "repository (no subclass redefining it, no other file calling it), not for a file given alone")
    return (f"{where}: its callers are followed to their steps only where every use of it is a self.{method}(...) "
            "call in its class")


def _stepped_by_heirs(rule, site: ScaleLossSite, opt: Any, info: AmpFile) -> bool:
    """The plan's step-heir route (``step_heir_plan``): ``self.<opt>``, scaled in this method
    of the launcher's class, is stepped by its subclasses in files without apex.amp, whose
    loops the pipeline edits to step through the inherited GradScaler."""
    if info.plan is None or not info.plan.step_heirs or not _on_self(site, opt):
        return False
    cls = class_of_method(rule.parents, site.func)
    return (
        cls is not None
        and cls.name.value == info.plan.heir_base
        and (site.func.name.value, opt.attr.value) in info.plan.step_heirs
    )


def _override_stepped(rule, site: ScaleLossSite, opt: Any, func: Any, info: AmpFile) -> bool:
    """The plan's override-step route (``override_step_plan``): the method ``func`` steps
    ``self.<opt>``, and the pipeline edits its one override (a subclass's, another file) to
    step through the same GradScaler."""
    cls = class_of_method(rule.parents, func)
    if info.plan is None or cls is None or not _on_self(site, opt):
        return False
    return (cls.name.value, func.name.value, opt.attr.value) in info.plan.override_steps


def _on_self(site: ScaleLossSite, opt: Any) -> bool:
    """Whether ``opt`` is ``self.<name>`` of the method holding ``site``."""
    if site.func is None:
        return False
    me = self_name(site.func)
    return isinstance(opt, cst.Attribute) and isinstance(opt.value, cst.Name) and opt.value.value == me


def _base_step(rule, site: ScaleLossSite, opt: Any, info: AmpFile) -> Optional[Tuple[str, str]]:
    """The plan's ``base_steps`` entry of this method and ``self.<opt>``: (optimizer
    attribute, the test the launcher's initialize is under), or None."""
    if info.plan is None or not info.plan.base_steps or not _on_self(site, opt):
        return None
    cls = class_of_method(rule.parents, site.func)
    key = (cls.name.value, site.func.name.value, opt.attr.value) if cls is not None else None
    return next(((a, guard) for c, m, a, guard in info.plan.base_steps if (c, m, a) == key), None)


def _narrower_than_base(rule, site: ScaleLossSite, info: AmpFile, guard: str) -> str:
    """Why a plain backward beside this scaled one may run while the base's GradScaler is on
    (its clause tests other than the launcher's initialize did, ``guard``): the base's step
    would unscale gradients no GradScaler scaled; "" when it cannot."""
    if not _plain_backward_beside(site, info):
        return ""
    clause = scale_clause(rule.parents, site.with_stmt, site.func)
    test = code_of(clause.test).strip() if clause is not None else ""
    if same_expression(test, guard):
        return ""
    return (
        f"{site.func.name.value}() scales the loss only if {test or 'always'}, and runs a plain backward "
        f"otherwise, while the GradScaler is on when {guard or 'always'} (the base's step would unscale "
        "gradients no GradScaler scaled)"
    )


def _stepped_by_base(rule, site: ScaleLossSite, opt: Any, info: AmpFile) -> bool:
    """The plan's inheritance route (``heir_plan._base_steps``): this method overrides one of
    the base class (another file) that scales for the same ``self.<opt>``, which the base's
    own methods step through the inherited GradScaler; not where a plain backward beside it
    may run while that GradScaler is on (``_narrower_than_base``)."""
    entry = _base_step(rule, site, opt, info)
    return entry is not None and not _narrower_than_base(rule, site, info, entry[1])


def _base_step_gap(rule, site: ScaleLossSite, opt: Any, info: AmpFile) -> Optional[str]:
    """Why the base's steps cannot serve this override of its scaling method (the plan's
    ``base_step_gaps``, or a plain backward beside it), or None."""
    cls = class_of_method(rule.parents, site.func) if site.func is not None else None
    if info.plan is None or cls is None:
        return None
    entry = _base_step(rule, site, opt, info)
    if entry is not None:
        return f"the base steps it, but {_narrower_than_base(rule, site, info, entry[1])}"
    key = (cls.name.value, site.func.name.value)
    return next((why for c, m, why in info.plan.base_step_gaps if (c, m) == key), None)


def _stepped_by_binder(rule, site: ScaleLossSite, info: AmpFile) -> bool:
    """The plan's bound-backward route (``bound_plan``): this top-level function is bound as
    a method of an object whose class (a file without apex.amp) steps the optimizer through
    the GradScaler the launcher puts on it, edited by the pipeline."""
    return (
        info.plan is not None and site.func is not None and site.func.name.value in info.plan.bound_functions
        and class_of_method(rule.parents, site.func) is None and isinstance(rule.parents.get(site.func), cst.Module)
    )


def _overriding_heir(rule, func: Any, info: AmpFile) -> str:
    """Where a subclass redefines the method ``func`` that holds a step (``HVDTrainer in
    trainer/hvd.py``, from the repository plan; else a class of this file deriving from
    ``func``'s by its bare name: ``torch.optim.Optimizer`` is no class of this file); ""
    when none does or ``func`` is no method."""
    cls = class_of_method(rule.parents, func)
    if cls is None:
        return ""
    method = func.name.value
    if info.plan is not None:
        return next((w for c, m, w in info.plan.overridden if (c, m) == (cls.name.value, method)), "")
    for node in walk(rule.tree):
        if (
            isinstance(node, cst.ClassDef)
            and any(code_of(b.value) == cls.name.value for b in node.bases)
            and any(m.name.value == method for m in methods_of(node))
        ):
            return node.name.value
    return ""


def _holder_steps(rule, site: ScaleLossSite, opt: cst.BaseExpression, info: AmpFile) -> Optional[str]:
    """When the scaled optimizer is an attribute of an object the function steps instead
    (``amp.scale_loss(loss, self.optimizer.optimizer)`` then ``self.optimizer.step(where=w)``,
    a wrapper that steps what it holds), that step, for the finding: GradScaler.step must be
    given the optimizer it unscaled, and what the wrapper's step does is not visible here."""
    body = site.func.body if site.func is not None else rule.tree
    holder = opt.value if isinstance(opt, cst.Attribute) else None
    first = holder
    while isinstance(holder, (cst.Attribute, cst.Name)):
        calls = step_calls(body, code_of(holder))
        if calls:
            # the object that holds the optimizer directly: why it is not a proven wrapper
            # (wrapper classes are read by the whole-repository run only)
            why = ""
            if holder is first and info.plan is not None:
                why = wrapper_holder(rule, site.func, opt, dict(info.plan.optimizer_wrappers))[1]
            why = why or _unfollowed_parameter(site.func, holder, opt) or "not provably the same step"
            return f"{code_of(calls[0])} steps {code_of(holder)}, which holds it: {why}"
        holder = holder.value if isinstance(holder, cst.Attribute) else None
    return None


def _unfollowed_parameter(func: Any, holder: Any, opt: cst.BaseExpression) -> str:
    """Why a holder that is a plain parameter of ``func`` (``def train(..., optimizer_g)``
    stepping ``optimizer_g`` after scaling ``optimizer_g._optim``) is no proven wrapper: its
    class is not followed into the function.  "" for any other holder."""
    if not isinstance(func, cst.FunctionDef) or not isinstance(holder, cst.Name) or holder is not opt.value:
        return ""
    params = func.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    if holder.value not in names:
        return ""
    return (
        f"{holder.value} is a parameter of {func.name.value}(), whose class is not followed into it, so its "
        f"step() is not proven to step {code_of(opt)} once (GradScaler.step needs the optimizer it "
        "unscaled, or a proven wrapper of it)"
    )


def _access(rule, func, home, home_cls, info: AmpFile, visiting: Set) -> Optional[str]:
    """The expression that reaches the scaler inside ``func``, threading it as a parameter
    when every caller can pass it; None when it cannot be proven."""
    parents = rule.parents
    if func in info.access:
        return info.access[func]
    name = info.scaler_name
    remote = bool(info.entry_functions or info.class_threaded or info.carried_functions or info.received)
    remote = (remote or bool(info.given_by_launchers)) and not info.training_inits
    result: Optional[str] = None
    if func in info.entry_functions:
        calls = _callers(rule, func, allow_none=True)
        if calls is not None and _callers_reach(rule, func, calls, home, home_cls, info, visiting):
            info.threaded[func] = calls
            result = name
    elif remote and func is None:
        result = None  # module level of a file whose scaler arrives as a parameter
    elif func is home or (home is not None and is_nested_in(parents, func, home) and info.storage == "local"):
        result = (self_name(home) + "." + name) if info.storage == "self" else name
    elif home is None and not remote:
        result = name  # module-level initialize: a global
    elif info.storage == "self" and class_of_method(parents, func) is home_cls:
        result = self_name(func) + "." + name
    elif info.storage == "self" and held_instance(rule, class_of_method(parents, func), home_cls)[0]:
        held = held_instance(rule, class_of_method(parents, func), home_cls)[0]
        result = f"{self_name(func)}.{held}.{name}"  # the initializing object its class keeps
    elif func is not None and func not in visiting and class_of_method(parents, func) is not None:
        cls = class_of_method(parents, func)
        if cls in info.class_threaded:
            result = self_name(func) + "." + name
        else:
            calls = _class_callers(rule, cls)
            if calls and _callers_reach(rule, func, calls, home, home_cls, info, visiting):
                info.class_threaded[cls] = calls
                result = self_name(func) + "." + name
    elif info.storage == "self" and (instance := _local_instance(rule, func, home, home_cls, info)) is not None:
        result = f"{instance}.{name}"  # the instance it builds
    elif func is not None and func not in visiting and isinstance(parents.get(func), cst.Module):
        calls = _callers(rule, func)
        if calls and _callers_reach(rule, func, calls, home, home_cls, info, visiting):
            info.threaded[func] = calls
            result = name
        elif calls and _disabled_where_unreached(rule, func, calls, home, home_cls, info, visiting):
            info.threaded[func] = calls
            result = name
    if result is not None:
        info.access[func] = result
    return result


def _local_instance(rule, func, home, home_cls, info: AmpFile) -> Optional[str]:
    """``local_instance`` for ``func``'s amp sites."""
    sites = [s.with_stmt for s in info.scale_losses if s.func is func] + [n.node for n in info.needs if n.func is func]
    return local_instance(rule, func, home, home_cls, sites)


def _disabled_where_unreached(rule, func, calls, home, home_cls, info: AmpFile, visiting: Set) -> bool:
    """Some of ``calls`` (of the module-level ``func``) are in functions the scaler reaches,
    the others provably run none of ``func``'s own amp sites (``_amp_dead_calls``), and
    ``func`` calls no other function or class that needs the scaler: those others hand it a
    disabled GradScaler (recorded in ``info.disabled_calls``)."""
    from ._amp_dead_calls import dead_on_call

    sites = [s.with_stmt for s in info.scale_losses if s.func is func] + [n.node for n in info.needs if n.func is func]
    if not sites:
        return False
    needy = {s.func for s in info.scale_losses} | {n.func for n in info.needs}
    names = {f.name.value for f in needy if f is not None and f is not func}
    names |= {c.name.value for c in (class_of_method(rule.parents, f) for f in needy if f is not None) if c}
    if any(isinstance(n, cst.Call) and code_of(n.func).split(".")[-1] in names for n in walk(func.body)):
        return False  # it would hand the disabled GradScaler on: not followed
    visiting.add(func)
    try:
        reached = [c for c in calls if _access(rule, enclosing_function(rule.parents, c), home, home_cls, info, visiting)]
    finally:
        visiting.discard(func)
    others = [c for c in calls if c not in reached]
    if not reached or not all(dead_on_call(rule.parents, func, c, sites) for c in others):
        return False
    info.disabled_calls.extend(others)
    return True


def _callers_reach(rule, func, calls, home, home_cls, info: AmpFile, visiting: Set) -> bool:
    """Every one of ``calls`` (of ``func``) is in a function the scaler reaches."""
    visiting.add(func)
    try:
        return all(
            _access(rule, enclosing_function(rule.parents, c), home, home_cls, info, visiting) is not None
            for c in calls
        )
    finally:
        visiting.discard(func)


def self_attributes(module: cst.Module) -> Set[str]:
    """The attribute names the file reads or sets on ``self`` (``self.scaler``,
    ``self.use_amp``) or on the first parameter of a method, however named (``this.scaler``
    in a base class above): names a GradScaler or a switch kept on ``self`` must not take."""
    receivers = {"self"} | {
        stmt.params.params[0].name.value
        for cls in walk_of(module, cst.ClassDef)
        for stmt in cls.body.body
        if isinstance(stmt, cst.FunctionDef) and stmt.params.params
    }
    return {
        node.attr.value
        for node in walk_of(module, cst.Attribute)
        if isinstance(node.value, cst.Name) and node.value.value in receivers
    }


_last_names_in_use: List[Any] = []


def _names_in_use(module: cst.Module, parents: Any) -> FrozenSet[str]:
    """The names ``module`` refers to or takes as parameters (a name the GradScaler must not
    take); the same for each apex.amp rule that runs on one text (``_per_tree``)."""
    return remembered(
        _last_names_in_use,
        (module, parents),
        lambda: frozenset(
            n.value
            for n in walk_of(module, cst.Name)
            if not _is_member_name(parents, n) or isinstance(parents.get(n), cst.Param)
        ),
    )


def _is_member_name(parents, node: cst.Name) -> bool:
    """``x.name``, ``f(name=...)``, ``def f(name)``: the Name is not a reference to ``name``."""
    return not is_reference(parents, node)


def heirs(parents: Any, cls: Any, method: str) -> List[cst.ClassDef]:
    """The module-level classes of the file that subclass ``cls`` directly (``class
    EncDecTrainer(Trainer):``), inherit its ``method`` and its instance attributes: no
    ``__init__`` of their own, or one whose body calls ``super().__init__(...)`` as a
    statement of its own.  Their methods find what ``cls.__init__`` set on ``self``."""
    module = parents.get(cls)
    if not isinstance(module, cst.Module) or not isinstance(cls, cst.ClassDef):
        return []
    found = []
    for stmt in module.body:
        if not isinstance(stmt, cst.ClassDef) or stmt is cls or stmt.decorators:
            continue
        if not any(isinstance(b.value, cst.Name) and b.value.value == cls.name.value for b in stmt.bases):
            continue
        if any(m.name.value == method for m in methods_of(stmt)):
            continue
        init = next((m for m in methods_of(stmt) if m.name.value == "__init__"), None)
        if init is not None:
            body = init.body.body if isinstance(init.body, cst.IndentedBlock) else []
            if not any(
                isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1
                and isinstance(line.body[0], cst.Expr)
                and isinstance(line.body[0].value, cst.Call)
                and code_of(line.body[0].value.func) == "super().__init__"
                for line in body
            ):
                continue
        found.append(stmt)
    return found


def init_method(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    return next(
        (m for m in methods_of(cls) if m.name.value == "__init__" and not m.decorators and m.params.params), None
    )


def _class_callers(rule: Any, cls: Any, cross_file: bool = False) -> Optional[List[cst.Call]]:
    """Every ``C(...)`` of a module-level class with its own ``__init__``, or None if the
    class is used another way (subclassed, passed on) or instantiated at module level.
    ``cross_file``: the plan proved the other files' calls; only this file's are wanted
    (possibly none)."""
    if not isinstance(rule.parents.get(cls), cst.Module) or init_method(cls) is None or cls.decorators:
        return None
    name = cls.name.value
    calls = []
    for node in walk(rule.tree):
        if (
            isinstance(node, cst.Name)
            and node.value == name
            and node is not cls.name
            and not _is_member_name(rule.parents, node)
        ):
            parent = rule.parents.get(node)
            if (
                isinstance(parent, cst.Call)
                and parent.func is node
                and enclosing_function(rule.parents, parent) is not None
            ):
                calls.append(parent)
            elif not _own_super_argument(rule.parents, node, cls):
                return None
    return calls if (calls or cross_file) else None


def _own_super_argument(parents: Any, node: cst.Name, cls: cst.ClassDef) -> bool:
    """``node`` is the class named in ``super(Class, self)`` inside its own body: that builds
    nothing and hands the class to nobody."""
    arg = parents.get(node)
    call = parents.get(arg)
    return (
        isinstance(arg, cst.Arg)
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "super"
        and call.args[0] is arg
        and enclosing(parents, call, cst.ClassDef) is cls
    )


def _reaches(rule, func: Any, home: Any, home_cls: Any, info: AmpFile) -> bool:
    """Whether the scaler reaches ``func`` (``_access``), leaving the threading maps as they were."""
    saved = (dict(info.access), dict(info.threaded), dict(info.class_threaded))
    disabled = list(info.disabled_calls)
    try:
        return _access(rule, func, home, home_cls, info, set()) is not None
    finally:
        info.access, info.threaded, info.class_threaded = saved  # type: ignore[assignment]
        info.disabled_calls = disabled


def unreached_reason(rule, func: Any, home_cls: Any, info: AmpFile, reaches: Any = None) -> str:
    """Why no GradScaler can be handed to ``func`` (for the finding), when it is plain: a
    module-level function used other than by calls (stylegan2's ``backwards =
    partial(loss_backwards, self.fp16)``), decorated or never called here; a method of a
    class that is used other than by calls or never instantiated in this file; with
    ``reaches`` (whether the scaler reaches a function), a module-level function called from
    functions it does not reach.  "" else."""
    parents = rule.parents
    if func is None:
        return ""
    if isinstance(parents.get(func), cst.Module):
        name = func.name.value
        if not keeps_the_function(rule, func):
            return f"{name} is decorated"
        for node in walk(rule.tree):
            if not (isinstance(node, cst.Name) and node.value == name and node is not func.name):
                continue
            if _is_member_name(parents, node):
                continue
            parent = parents.get(node)
            where = enclosing_function(parents, node)
            place = f"in {_qualified(parents, where)}()" if where is not None else "at module level"
            if isinstance(parent, cst.Call) and parent.func is node:
                if where is None:
                    return f"{name}() is called at module level, where no GradScaler exists"
                continue
            bound, partial_why = bound_calls(rule, node)
            if bound is not None:
                continue  # ``back = partial(f, x)``: its calls are f's, checked below
            stmt = rule.statement_of(node) if hasattr(rule, "statement_of") else None
            text = code_of(stmt).strip().splitlines()[0] if stmt is not None else code_of(parent)
            partial_why = f"; {partial_why}" if partial_why else ""
            return (
                f"{name} is also used as a value (`{text}` {place}){partial_why}"
                f"{_kept_note(rule, where, home_cls, info)}"
            )
        calls = _callers(rule, func)
        if calls == []:
            return f"{name} is not called in this file"
        callers = {enclosing_function(parents, c) for c in calls or []} - {func}
        unreached = {where for where in callers if reaches is not None and not reaches(where)}
        if unreached:
            places = ", ".join(sorted(f"{_qualified(parents, where)}()" for where in unreached))
            also = " also" if unreached != callers else ""
            notes = "".join(sorted({_kept_note(rule, where, home_cls, info) for where in unreached}))
            return f"{name}() is{also} called from {places}, where no GradScaler exists{notes}"
        return ""
    cls = class_of_method(parents, func)
    if cls is None:
        return _static_method_reason(parents, func)
    if cls is home_cls:
        return ""
    calls = _class_callers(rule, cls)
    method = f"{func.name.value} is a method of class {cls.name.value}"
    if home_cls is None and info.training_inits:
        home_cls = class_of_method(parents, info.training_inits[0].func)
    kept = _kept_instance(cls, home_cls)
    holder = (
        f" (the GradScaler would live on the {home_cls.name.value} it keeps as {kept}, and "
        f"{_unfollowed(rule, cls, home_cls)})"
        if kept
        else ""
    )
    if calls is None:
        return f"{method}, which is used other than by calls here{holder}"
    if not calls:
        return (
            f"{method}, which is not instantiated in this file, so its __init__ cannot be given the "
            f"GradScaler{holder}"
        )
    places = sorted(
        {
            f"{_qualified(parents, f)}()" if f is not None else "module level"
            for f in (enclosing_function(parents, c) for c in calls)
            if f not in info.access
        }
    )
    if places:
        return f"{method}, instantiated in {', '.join(places)}, where no GradScaler exists{holder}"
    return ""


def _static_method_reason(parents: Any, func: Any) -> str:
    """For a static or class method (vissl's ``run_backward(task, loss)``, handed the object
    that holds the amp state): ``_access`` threads the GradScaler into plain methods (on
    ``self``) and module-level functions only.  "" for anything else."""
    owner = parents.get(parents.get(func))
    if not isinstance(owner, cst.ClassDef):
        return ""
    kinds = [code_of(d.decorator) for d in func.decorators if code_of(d.decorator) in ("staticmethod", "classmethod")]
    kind = "static method" if kinds == ["staticmethod"] else "class method" if kinds else ""
    if not kind:
        return ""
    return f"{func.name.value} is a {kind} of class {owner.name.value}: the GradScaler is not threaded into one"


def _kept_instance(cls: Any, home_cls: Any) -> str:
    """``self.GAN`` when ``cls`` keeps an instance of ``home_cls`` (the class whose method
    initializes) there (``self.GAN = StyleGAN2(...)``); "" otherwise."""
    if cls is None or home_cls is None:
        return ""
    for node in walk(cls):
        if (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and code_of(node.value.func) == home_cls.name.value
            and len(node.targets) == 1
        ):
            return code_of(node.targets[0].target)
    return ""


def _kept_note(rule: Any, where: Any, home_cls: Any, info: AmpFile) -> str:
    """For a function used as a value in the method ``where``: when that method's class keeps
    an instance of the class that initializes, the note that its calls there could reach the
    GradScaler only through that instance."""
    parents = rule.parents
    if home_cls is None and info.training_inits:
        home_cls = class_of_method(parents, info.training_inits[0].func)
    cls: Any = class_of_method(parents, where) if where is not None else None
    kept = _kept_instance(cls, home_cls) if cls is not home_cls else ""
    if not kept:
        return ""
    return (
        f"; the calls there would need the GradScaler of the {home_cls.name.value} that {cls.name.value} keeps "
        f"as {kept}, and {_unfollowed(rule, cls, home_cls)}"
    )


def _unfollowed(rule: Any, cls: Any, home_cls: Any) -> str:
    """Why the GradScaler of the ``home_cls`` object ``cls`` keeps is not read through it."""
    held, why = held_instance(rule, cls, home_cls)
    if why:
        return f"{why}, so it may hold an object without one"
    if held:
        return "the GradScaler is not kept on that object (no method of its class scales a loss)"
    return "that attribute is not followed"


def _qualified(parents: Any, func: Any) -> str:
    cls = class_of_method(parents, func)
    return f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value


#: decorators proven to return the function they are given, so that a call of the decorated
#: name is a call of the function itself, with whatever arguments it is given: mocona's
#: ``S.inject`` (HRFormer's ``train_one_epoch``) swaps the scoped-variable markers among the
#: function's defaults for their variables in place and returns the same function object
SAME_FUNCTION_DECORATORS = frozenset({"mocona.scopedvar.S.inject"})


def keeps_the_function(rule: Any, func: cst.FunctionDef) -> bool:
    """Every decorator of ``func`` returns ``func`` itself (none: trivially)."""
    return all(rule.qualified_names(d.decorator) & SAME_FUNCTION_DECORATORS for d in func.decorators)


def _callers(rule, func: cst.FunctionDef, allow_none: bool = False) -> Optional[List[cst.Call]]:
    """Every call ``f(...)`` of a module-level function in this file, or None if ``f`` is
    also used another way (passed on, reassigned, decorated but by a decorator that returns
    it) — then it cannot be threaded.  ``allow_none``: no call in this file is fine (the
    plan's entries, called from others)."""
    if not keeps_the_function(rule, func):
        return None
    name = func.name.value
    module = rule.tree
    calls = []
    for node in names_spelled(module, name):
        if (
            node is not func.name
            and not _is_member_name(rule.parents, node)
        ):
            parent = rule.parents.get(node)
            if isinstance(parent, cst.Call) and parent.func is node:
                if enclosing_function(rule.parents, parent) is None:
                    return None  # called at module level: no scaler there
                calls.append(parent)
            else:
                bound = partial_calls(rule, node)  # ``back = partial(f, x)``: its calls are f's
                if bound is None:
                    return None
                calls.extend(bound)
    return calls if (calls or allow_none) else None


class ScalerRef:
    """How a GradScaler is reached from some function: ``expr`` (``scaler``,
    ``self.scaler``) and the on/off switch to use for autocast there (None: always on)."""

    def __init__(self, expr: str, enabled: Optional[str]) -> None:
        self.expr = expr
        self.enabled = enabled


def find_scalers(rule, module: cst.Module):
    """A lookup ``node -> ScalerRef | None`` over the GradScalers defined in ``module``; none
    in a file the initialize rule left on the shim (a GradScaler the file makes on its own
    belongs to a native branch, not to the apex.amp state its sites keep)."""
    if rule.file_state().get(LEFT_ON_SHIM):
        return lambda node: None
    parents = rule.parents
    local: Dict[Optional[cst.FunctionDef], Tuple[str, Optional[str]]] = {}
    attrs: Dict[cst.ClassDef, Tuple[str, Optional[str], Optional[cst.FunctionDef]]] = {}
    plan = rule.repo_plan()
    #: the scaler parameter the cross-file plan added (its switch is the scaler's own)
    external: Set[str] = {plan.scaler_name} if plan is not None and plan.takes_scaler else set()
    #: the GradScaler the initialize rule created: it wins over a user's own scaler beside it
    created = rule.file_state().get("scaler")
    names: Set[str] = set(external)
    #: the names the tool gives apex's GradScaler (created here or handed in by the plan): one
    #: of them wins over a GradScaler the file makes on its own (a native branch's, which may
    #: not exist on apex's path: ``self._scaler`` only ``if using_amp``)
    ours: Set[str] = external | ({created} if created else set())
    if plan is not None and plan.scaler_name:
        ours.add(plan.scaler_name)
    #: the classes whose scaler attribute found so far is one the file made on its own
    own_attrs: Set[cst.ClassDef] = set()
    for node in walk_of(module, cst.Assign):
        if len(node.targets) != 1:
            continue
        # ``scalers = [GradScaler(...) for _ in range(2)]``: one per loss id
        value = node.value.elt if isinstance(node.value, cst.ListComp) else node.value
        if not (isinstance(value, cst.Call) and rule.qualified_names(value.func) & GRADSCALER_NAMES):
            continue
        enabled_arg = arg_value(value, 4 if _is_legacy(rule, value) else 5, "enabled")
        enabled = code_of(enabled_arg) if enabled_arg is not None else None
        target = node.targets[0].target
        func = enclosing_function(parents, node)
        if isinstance(target, cst.Name):
            if func in local and local[func][0] == target.value:  # created on alternative paths
                local[func] = (target.value, f"{target.value}.is_enabled()")
            elif func not in local or local[func][0] != created:
                local[func] = (target.value, enabled)
            names.add(target.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            cls = class_of_method(parents, func)
            if cls is not None and target.value.value == self_name(func):
                own = target.attr.value not in ours
                if own and cls in attrs and cls not in own_attrs:
                    continue  # apex's GradScaler is kept on self already
                if cls in attrs and attrs[cls][0] == target.attr.value:
                    enabled = f"{code_of(target)}.is_enabled()"
                attrs[cls] = (target.attr.value, enabled, func)
                if own:
                    own_attrs.add(cls)
                else:
                    own_attrs.discard(cls)

    _returned_scalers(rule, module, local)
    kept = module_variable(module)
    if kept is not None and None not in local:
        local[None] = (kept, f"{kept}.is_enabled()")  # the module-level GradScaler (APX250)
        names.add(kept)
    if plan is not None and plan.module_reader and None not in local:
        kept = f"{plan.reader_access}.{plan.scaler_name}"  # the home module's variable, read at call time (APX252)
        local[None] = (kept, f"{kept}.is_enabled()")
        names.add(kept)
    if plan is not None and plan.received:
        # ``..., scaler = create_optimizer(...)``: the factory of another file returned it;
        # ``..., self.scaler = create_optimizer(...)`` in a class's __init__
        received = {name for name, _text in plan.received}
        if MODULE_LEVEL in received and None not in local:
            local[None] = (plan.scaler_name, f"{plan.scaler_name}.is_enabled()")  # a script's top level
            names.add(plan.scaler_name)
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in received and stmt not in local:
                local[stmt] = (plan.scaler_name, f"{plan.scaler_name}.is_enabled()")
                names.add(plan.scaler_name)
            init = init_method(stmt) if isinstance(stmt, cst.ClassDef) else None
            if isinstance(stmt, cst.ClassDef) and init is not None and (stmt not in attrs or stmt in own_attrs):
                if f"{stmt.name.value}.__init__" in received:
                    kept = f"{self_name(init)}.{plan.scaler_name}"
                    attrs[stmt] = (plan.scaler_name, f"{kept}.is_enabled()", None)
                    own_attrs.discard(stmt)
    for node in walk_of(module, cst.Assign):
        if not (len(node.targets) == 1 and isinstance(node.value, cst.Name) and node.value.value in names):
            continue
        target = node.targets[0].target
        func = enclosing_function(parents, node)
        cls = class_of_method(parents, func)
        if (
            cls is None
            or (cls in attrs and not (cls in own_attrs and node.value.value in ours))
            or not isinstance(target, cst.Attribute)
            or code_of(target.value) != self_name(func)
        ):
            continue
        if any(p.name.value == node.value.value for p in list(func.params.params) + list(func.params.kwonly_params)):
            enabled = next((e for n, e in local.values() if n == node.value.value), None)
            enabled = enabled or ("external" if node.value.value in external else None)
            attrs[cls] = (target.attr.value, f"{node.value.value}.is_enabled()" if enabled else None, None)
            own_attrs.discard(cls)

    count = rule.file_state().get("loss_scalers") or (plan.loss_scalers if plan is not None else 1)

    def lookup(node: cst.CSTNode) -> Optional[ScalerRef]:
        found = _lookup(node)
        if found is not None and count > 1 and found.enabled == f"{found.expr}.is_enabled()":
            found.enabled = f"{found.expr}[0].is_enabled()"  # one GradScaler per loss id, all switched alike
        return found

    carried = {(cls, method): access for cls, method, access in (plan.carried if plan is not None else ())}
    #: top-level functions handed the carrier the GradScaler is kept on (``args.scaler``)
    on_carrier: Dict[str, str] = dict(rule.file_state().get("carrier_functions", {}))
    on_carrier.update(rule.file_state().get("scaler_parameters", {}))  # apex.amp's parameter carries it
    on_carrier.update(plan.amp_value_parameters if plan is not None else ())  # so where other files give it

    #: (launcher, class) -> the launcher's instance of that class and its line (``local_binding``)
    bindings: Dict[Tuple[int, int], Optional[Tuple[str, int]]] = {}

    def _lookup(node: cst.CSTNode) -> Optional[ScalerRef]:
        func = enclosing_function(parents, node)
        start = func
        if func is not None and carrier_key(parents, func) in on_carrier:
            access = on_carrier[carrier_key(parents, func)]
            return ScalerRef(access, f"{access}.is_enabled()")
        owner = class_of_method(parents, func)
        if owner is not None and (owner.name.value, func.name.value) in carried:
            access = carried[(owner.name.value, func.name.value)]
            return ScalerRef(access, f"{access}.is_enabled()")
        if owner is None and func is not None and ("", func.name.value) in carried and func.params.params \
                and isinstance(parents.get(func), cst.Module):  # bound as a method (``bound_plan``)
            access = f"{func.params.params[0].name.value}.{CARRIER_ATTRIBUTE}"
            return ScalerRef(access, f"{access}.is_enabled()")
        handed = start is not None and any(
            p.name.value in ours for p in list(start.params.params) + list(start.params.kwonly_params)
        )
        while True:
            if func in local and not (handed and local[func][0] not in ours):
                name, enabled = local[func]
                same = func is start
                return ScalerRef(name, enabled if same else (f"{name}.is_enabled()" if enabled else None))
            if func is None or handed:
                break
            func = enclosing_function(parents, func)
        func = start
        if func is not None:
            params = [p.name.value for p in list(func.params.params) + list(func.params.kwonly_params)]
            # a parameter named like a scaler some function keeps to the end (the one the
            # initialize rule created, after any scaler the user made on one branch only:
            # Transformer-XL's ``scaler`` is None on the apex path) comes first
            final = {n for n, _ in local.values()} | external
            # the initialize rule threads its GradScaler into this file's helpers as a new
            # parameter of its own name, also where it keeps the scaler on self
            # (``self.scaler``, so no plain name holds it)
            known = names | ({created} if created else set())
            for name in sorted((n for n in params if n in known), key=lambda n: (n != created, n not in final)):
                enabled = next((e for n, e in local.values() if n == name), None)
                enabled = enabled or ("external" if name in external else None)
                return ScalerRef(name, f"{name}.is_enabled()" if enabled else None)
            cls = class_of_method(parents, func)
            if cls in attrs:
                attr, enabled, home = attrs[cls]
                expr = f"{self_name(func)}.{attr}"
                if func is home:
                    return ScalerRef(expr, enabled)
                return ScalerRef(expr, f"{expr}.is_enabled()" if enabled else None)
            for keeper, (attr, enabled, _home) in attrs.items():
                held = held_instance(rule, cls, keeper)[0]  # ``self.GAN.scaler``: the object it keeps
                if held:
                    expr = f"{self_name(func)}.{held}.{attr}"
                    return ScalerRef(expr, f"{expr}.is_enabled()" if enabled else None)
            # ``trainer = Trainer(...)`` in a launcher, the GradScaler made in Trainer.__init__
            built = []
            for keeper, (attr, enabled, home) in attrs.items():
                key = (id(func), id(keeper))
                if key not in bindings:  # worked out once per launcher and class, not per node
                    bindings[key] = local_binding(rule, func, home, keeper)
                found = bindings[key]
                if found is not None and rule.line_of(node) > found[1]:
                    built.append((found[0], attr, enabled))
            if len(built) == 1:
                instance, attr, enabled = built[0]
                expr = f"{instance}.{attr}"
                return ScalerRef(expr, f"{expr}.is_enabled()" if enabled else None)
        return None

    return lookup


def _returned_scalers(rule, module: cst.Module, local: Dict[Any, Tuple[str, Optional[str]]]) -> None:
    """``model, opt, scaler = setup(...)`` where the module-level ``setup`` creates ``scaler``
    and returns it last (APX217): the caller has it too, switched as the helper's is."""
    helpers = {f.name.value: v for f, v in local.items() if f is not None and rule.parents.get(f) is module}
    for node in walk_of(module, cst.Assign):
        if not (
            len(node.targets) == 1
            and isinstance(node.targets[0].target, (cst.Tuple, cst.List))
            and isinstance(node.value, cst.Call)
            and isinstance(node.value.func, cst.Name)
            and node.value.func.value in helpers
        ):
            continue
        name, enabled = helpers[node.value.func.value]
        last = node.targets[0].target.elements[-1].value
        func = enclosing_function(rule.parents, node)
        if isinstance(last, cst.Name) and last.value == name and func not in local:
            local[func] = (name, f"{name}.is_enabled()" if enabled else None)


def _is_legacy(rule, call: cst.Call) -> bool:
    return bool(
        rule.qualified_names(call.func) & {"torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"}
    )
