"""The cross-file plan: how the GradScaler created at an ``amp.initialize`` reaches the
``amp.scale_loss`` / ``amp.state_dict`` / ``amp.load_state_dict`` sites of other files.

Pure data, decided once per run from the repository index.  A file *launches* when it
holds the one training ``amp.initialize`` of its run; a top-level function or class of
another file *needs the scaler* when it scales a loss or saves/loads the amp state, or calls
something that does.  Every call of such a definition must come from a launcher or from
another definition that needs the scaler; then each needy definition called from another
file takes the scaler as a new parameter (:attr:`FilePlan.entries`), and those calls pass
it (:attr:`FilePlan.pass_to`).  Files joined by planned calls form a *component*, migrated
completely or not at all: the driver drops the plan of a component when any of its files
falls back to ``apexcompat.amp`` (see ``pipeline.migrate_planned``).

What no plan is proven for keeps the per-file behaviour; ``unplanned`` says why, so the
per-file report can name the real reason (a caller without a scaler, a definition passed
on as a value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from .amp_param_plan import add_outside_users
from .amp_value_plan import add_amp_value_routes
from .attach_plan import attach_route
from .base_plan import carried_methods, check_heirs, lendable_base
from .init_base_plan import base_words, initializing_heirs, kept_name, self_kept_route
from .built_route import built_route
from .gradient_readers_plan import gradient_readers
from .carrier_plan import CarrierFacts, carrier_facts, share_carriers, users_of, walked_files
from .factory_callers import CallerEdit, caller_edit
from .family_names import family_attribute_names, family_attributes
from .stepping_methods import stepping_methods
from .framework_plan import framework_route, module_level_note
from .glue_plan import GlueRefusal, GlueRoute, glue_route
from .heir_plan import add_heir_routes
from .probe_gate_plan import probe_gates
from .runner_hook_plan import add_runner_hook_routes
from .holder_plan import add_holder_routes
from .held_optimizer_plan import held_route
from .override_step_plan import add_override_step_routes
from .step_heir_plan import add_step_heir_routes
from .bound_plan import add_bound_routes
from .clip_loop_notes import add_clip_loop_notes
from .holder_route import HolderEdit
from .processor_plan import add_processor_routes
from .import_heads import ImportHead, import_head
from .launcher_importers import importer_refusal
from .whole_words import holds_word
from .launcher_scripts import not_a_script, on_the_shim
from .module_scaler_plan import imported_files, module_scaler_route, reader_route
from .launcher_notes import ambiguous_import_note, unbound_scale_note
from .amp_reexports import amp_reexports
from .star_imports import BINDS, NOT_BOUND, UNKNOWN, StarImports
from .unreferenced import module_handed_on, unreferenced_definitions
from .optimizer_wrappers import PROVEN_MEMBERS
from .steppable_plan import with_steppable_wrappers
from .several_launchers import several_launchers, stray_calls
from .submodule_calls import module_locals, read_as_value, with_submodule_calls
from .exclusive_runs import runs_apart
from .optional_scaler import STATE_MEMBERS, methods_save_or_load_only, module_stem, runs_alone, saves_or_loads_only
from .site_words import in_definition
from .reach import what_a_run_reaches
from .runtime_classes import runtime_build_of
from .forward_fed import HandedArgs, calls_in_repository
from .gradient_helpers_plan import helpers_called_elsewhere
from .caller_step_plan import SteppedCall, caller_stepped
from .override_plan import named_base, overridden_methods
from .self_called_plan import self_called_only
from .parser_factories import FlagDefaults
from .repo_index import (
    HOLDER_USES,
    MODULE_LEVEL,
    OTHER,
    SAME_OBJECT,
    SCALER_MEMBERS,
    STATE_USES,
    TORCH_WRAPPERS,
    VAR_KEYWORD,
    AmpArgument,
    ModuleResolver,
    ModuleSummary,
    names_scale_loss,
    summarise,
)

#: a note that applies to every top-level definition of a file (a dropped component)
ANY_DEFINITION = "*"
#: the note of a launcher whose losses are scaled in a definition no call reaches
SCALED_ELSEWHERE = "<scaled elsewhere>"
#: the start of the launcher note of ``_mark_nothing_scaled`` when the reach proof fails
NOT_PROVEN = "no amp.scale_loss in this file, and it is not proven that no loss is scaled after its amp.initialize"
#: where the engine puts a file's ``FilePlan`` for the rules (``CodemodContext.scratch``)
REPO_PLAN_KEY = "apexcompat.repo_plan"
#: where the engine keeps what one rule tells the later ones about the same file (a dict)
FILE_STATE_KEY = "apexcompat.file_state"
#: names a GradScaler parameter may take, in order of preference
SCALER_PARAM_NAMES = ("scaler", "grad_scaler", "amp_scaler", "amp_grad_scaler")
#: the names of the list of GradScalers, one per loss id (``num_losses=2``)
SCALERS_PARAM_NAMES = ("scalers", "grad_scalers", "amp_scalers", "amp_grad_scalers")

Def = Tuple[str, str]  # (file path, top-level definition name)
#: ``_method_owner`` of an instance of one of torch's module wrappers: no method of the
#: repository is called on it
NO_METHOD: Def = ("", "")


@dataclass(frozen=True)
class FilePlan:
    """What one file does for the cross-file plan (all names as written in that file)."""

    #: the component this file belongs to (files migrated together); None when the file only
    #: carries notes on why no plan exists
    component: Optional[int] = None
    #: the GradScaler's parameter name in this file's entry definitions
    scaler_name: str = ""
    #: top-level functions/classes that take the GradScaler as a new parameter
    entries: Tuple[str, ...] = ()
    #: call text (``do_train``, ``engine.do_train``) -> keyword the scaler is passed as
    pass_to: Tuple[Tuple[str, str], ...] = ()

    #: top-level definition (``MODULE_LEVEL`` for the launcher's initialize) -> why the
    #: GradScaler cannot reach it from another file
    notes: Tuple[Tuple[str, str], ...] = ()
    #: set when this file's own amp.initialize must keep apex.amp (through the shim), and why
    refusal: str = ""
    #: entry classes of this file whose ``__call__(loss, ...)`` scales a loss the launcher
    #: computes under its own autocast variable (``with amp_autocast():``), which the
    #: launcher binds to ``torch.autocast`` on the apex branch
    autocast_from_caller: Tuple[str, ...] = ()
    #: in the launcher: the constructor calls (as in ``pass_to``) whose instances are called
    #: with losses that must be proven to run under that autocast variable
    autocast_for_calls: Tuple[str, ...] = ()
    #: every training initialize of this file's component makes a dynamic loss scaler
    dynamic_scaler: bool = False
    #: ``Class.method`` of this file's entry classes whose loss (a parameter) the launchers
    #: compute: autocast goes around their forward passes there; a top-level function's name
    #: when its caller is a launcher without apex.amp (``glue_plan``), shown in ``glued_from``
    autocast_at_caller: Tuple[str, ...] = ()
    glued_from: str = ""
    #: the caller-step route (``caller_step_plan``): in a helper's file, (function, the
    #: launchers calling it, shown): the loss it scales comes from them and they step after
    #: each call; in a launcher, its calls of such helpers (``SteppedCall``)
    stepped_at_callers: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    stepped_calls: Tuple[SteppedCall, ...] = ()
    #: in the launcher: (constructor call text, method, loss position without self, loss
    #: parameter name) of those classes; its calls of that method on the instances get the
    #: autocast around the forward pass that computes the loss handed over
    loss_methods: Tuple[Tuple[str, str, int, str], ...] = ()
    #: those of ``entries`` that no file refers to (``unreferenced``): no call passes it yet
    unreferenced: Tuple[str, ...] = ()
    #: those of ``entries`` also called from scripts that run alone, without a GradScaler: the
    #: parameter defaults to None and each amp site is used only when it is given
    #: (``optional_scaler``)
    optional_entries: Tuple[str, ...] = ()
    #: (class, method) of this file whose method takes the GradScaler as a new parameter: the
    #: instance is built before the scaler exists (``model = GAN()`` before amp.initialize),
    #: so the calls of the method pass it (``model.train_step(..., scaler=scaler)``)
    method_entries: Tuple[Tuple[str, str], ...] = ()
    #: those of ``method_entries`` also called from files that run alone, without a
    #: GradScaler, and that only save or load the amp state: the parameter defaults to None
    #: and each amp site is used only when it is given (``optional_scaler``)
    optional_methods: Tuple[Tuple[str, str], ...] = ()
    #: call texts (``restore``) of this file that are given apex.amp itself (``amp=amp``) for
    #: a parameter that only saves/loads its state: they are given the GradScaler instead
    amp_arguments: Tuple[str, ...] = ()
    #: (function, parameter) of this file that receive apex.amp from such a call
    amp_parameters: Tuple[Tuple[str, str], ...] = ()
    #: those of ``amp_arguments`` (``restart(path, amp=amp)``, ``state.keep(amp)``) whose
    #: consumer, left as it is, may load an apex checkpoint entry into what it is given: they
    #: are given ``ScalerCheckpoint(scaler)`` (``checkpoints.HOLDER``), which converts it
    amp_holders: Tuple[str, ...] = ()
    #: those of ``amp_arguments`` whose function reads ``amp.master_params(opt)``: gradients
    #: it uses, which must be unscaled before the call
    amp_gradients: Tuple[str, ...] = ()
    #: names this file imports (by name or with ``from m import *``) of other files' functions
    #: and classes that read ``.grad`` (``gradient_readers_plan``): a call through one between
    #: the scaled backward and the step is a gradient use
    gradient_readers: Tuple[str, ...] = ()
    #: GradScalers of the component, one per apex loss id (``num_losses=2``): then the
    #: scaler passed around is their list
    loss_scalers: int = 1
    #: (helper, parameter) of this file given as ``loss_id`` to its amp.scale_loss, which the
    #: glue route's launcher gives a number below ``loss_scalers`` at every call: the helper
    #: takes the list and picks ``scalers[parameter]`` (``glue_plan``)
    glued_loss_ids: Tuple[Tuple[str, str], ...] = ()
    #: optimizer wrapper classes this file names (its own or imported; see
    #: ``optimizer_wrappers``): (local name, the attribute holding the wrapped optimizer),
    #: proven for the class and every subclass of it in the repository
    optimizer_wrappers: Tuple[Tuple[str, str], ...] = ()
    #: classes of other files without apex.amp whose step this file may hand the GradScaler
    #: (``steppable_plan``): (local name, the attribute holding the optimizer, their file,
    #: the class name there)
    scaler_steppable: Tuple[Tuple[str, str, str, str], ...] = ()

    #: (class, method, expression) of this file's framework hooks/runners: the GradScaler is
    #: read from the runner the framework hands them (``runner.grad_scaler``, see
    #: ``framework_plan``)
    carried: Tuple[Tuple[str, str, str], ...] = ()
    #: in the launcher: (function, runner name, line) of the runner build the GradScaler is
    #: put on right after
    runner_builds: Tuple[Tuple[str, str, int], ...] = ()
    #: in the launcher: (function, target, line) of the objects built there that carry the
    #: GradScaler to the methods of their class (``built_route``); in that class's file, those
    #: (class, method), which run their own forward pass
    object_builds: Tuple[Tuple[str, str, int], ...] = ()
    built_methods: Tuple[Tuple[str, str], ...] = ()
    #: the bound-backward route (``bound_plan``): in the file of the function a launcher binds
    #: onto the object carrying the GradScaler, the top-level functions bound so
    bound_functions: Tuple[str, ...] = ()
    #: the attach route (``attach_plan``): (definition, instance, attribute) of this launcher,
    #: whose GradScaler goes on an instance built before it: ``instance.attribute = scaler``
    attach_scaler: Tuple[Tuple[str, str, str], ...] = ()
    #: in the launcher: (its class, attribute, the base shown) whose ``__init__`` keeps the
    #: GradScaler on self (one of ``attach_scaler``) for the methods of a base class of
    #: another file that save or load amp's state (``init_base_plan``)
    kept_for_bases: Tuple[Tuple[str, str, str], ...] = ()
    #: (class, method) of this file that read that GradScaler on self (also in ``carried``):
    #: their forward passes are their own, autocast goes there
    attached_methods: Tuple[Tuple[str, str], ...] = ()
    #: (class, method) of this file that scale through an optimizer the object holding the
    #: GradScaler keeps (``held_optimizer_plan``; also in ``carried`` and ``attached_methods``)
    held_methods: Tuple[Tuple[str, str], ...] = ()
    #: (method, attribute) of that object's class whose method only calls the same method of
    #: that attribute (``def step(self): self.G.step()``)
    held_delegates: Tuple[Tuple[str, str], ...] = ()
    #: in the launcher of that route: the methods that read the GradScaler on its object
    #: (``Trainer.train() of src/train.py``)
    held_readers: Tuple[str, ...] = ()
    #: in the launcher: why its forward passes run under autocast (the framework's decorator)
    framework_autocast: str = ""
    #: in the launcher: (function, batch processor, line of the runner call, switch) of each
    #: runner built there handed a batch processor of this file: the processor runs its body
    #: under autocast while its new keyword parameter ``switch`` is true, which that call
    #: sets from the GradScaler's state (``processor_plan``)
    processors: Tuple[Tuple[str, str, int, str], ...] = ()
    #: in a hook's file: the hook classes whose losses come from the runner's outputs, which
    #: that processor computes, and where (shown to the user)
    processor_autocast: Tuple[Tuple[str, str], ...] = ()
    #: lines of this file's ``try`` statements that only probe whether apex is installed,
    #: kept because another file still needs apex (``kept_probes``), and where that one does
    kept_probes: Tuple[int, ...] = ()
    apex_needed_at: str = ""
    #: top-level functions of this file asking apex's state whether amp.initialize ran, which
    #: no other walked file names, in a repository enabling no autocast itself (``probe_gate_plan``)
    probe_gates: Tuple[str, ...] = ()
    #: in a hook's file of the runner-hook route (``runner_hook_plan``): (hook class, method,
    #: where the forward pass computing the runner's stored loss goes under autocast)
    runner_step_autocast: Tuple[Tuple[str, str, str], ...] = ()
    #: in a hook's file: (hook class, why its losses, read from the runner's outputs, cannot
    #: be put under autocast) for the hooks the batch-processor route refused
    processor_refusals: Tuple[Tuple[str, str], ...] = ()
    #: in a launcher: no file of the repository names ``scale_loss``, so apex never scaled a
    #: loss of its initialize (it trained unscaled): autocast without a GradScaler
    nothing_scaled: bool = False
    #: with ``nothing_scaled``: the repository scales losses, but proven not from this
    #: launcher's code (``_may_reach_a_scaled_loss``)
    unscaled_here: bool = False
    #: with ``unscaled_here``: the ``amp.scale_loss`` the launcher's code does reach, each of
    #: which reads a name amp bound only in another function (NameError before it scales, in
    #: the original too): where the first one is (``pybert/trainer.py (Trainer.fit())``)
    unbound_reached: str = ""
    #: apex.amp is stored on an attribute here (``args.amp = amp``): where else the object
    #: may be read (``carrier_plan``); None when this file stores it nowhere
    carrier: Optional[CarrierFacts] = None
    #: in a launcher: the top-level function (a model factory) whose amp.initialize calls
    #: make the GradScaler, returned as one more value to its callers in ``returned_to``
    #: (their files, comma-separated)
    returns_scaler: str = ""
    returned_to: str = ""
    #: in the file of that caller: (its function, the call text) whose assignment unpacks
    #: the GradScaler as one more value (``..., scaler = create_optimizer(opt, models)``)
    received: Tuple[Tuple[str, str], ...] = ()
    #: the inheritance route (``heir_plan``): (class, method) of this file, a subclass of the
    #: launcher's initializing class, whose ``amp.scale_loss`` uses the inherited
    #: ``self.<scaler_name>`` (also in ``carried``); classes whose override of the
    #: initializing method re-creates it; in the launcher, that class; the optimizer
    #: attribute the base initialized
    heir_methods: Tuple[Tuple[str, str], ...] = ()
    heir_inits: Tuple[str, ...] = ()
    heir_base: str = ""
    heir_optimizer: str = ""
    #: where the inherited GradScaler is made: ``Class.method() in path``
    heir_from: str = ""
    #: of ``heir_methods``, (class, method, optimizer attribute, the test the launcher's
    #: initialize is under) whose override of a scaling method of the base leaves the step
    #: to the base's own stepping methods (``heir_plan``)
    base_steps: Tuple[Tuple[str, str, str, str], ...] = ()
    #: (class, method, why) of the other overrides of such a method: why the base's steps
    #: cannot serve it
    base_step_gaps: Tuple[Tuple[str, str, str], ...] = ()
    #: the step-heir route (``step_heir_plan``), in the launcher: (method, optimizer
    #: attribute) of its class's scaling methods whose optimizers subclasses of files
    #: without apex.amp step (no step of them here); else why that route was refused
    step_heirs: Tuple[Tuple[str, str], ...] = ()
    step_heir_refusal: str = ""
    #: the override-step route (``override_step_plan``), in the launcher: (class, method,
    #: optimizer attribute) of its methods stepping that attribute whose override in a
    #: subclass of another file the pipeline edits to step through the same GradScaler;
    #: else (class, method, why) where that route cannot take such an override
    override_steps: Tuple[Tuple[str, str, str], ...] = ()
    override_step_gaps: Tuple[Tuple[str, str, str], ...] = ()
    #: (top-level function handed apex.amp by a call in this file, ``path:line`` of another
    #: walked file that refers to it): its parameter cannot carry the GradScaler
    #: (``amp_param_plan``)
    used_elsewhere: Tuple[Tuple[str, str], ...] = ()
    #: the cross-file route of apex.amp (or None) handed to a function of another file that
    #: scales through the parameter it fills (``amp_value_plan``): in the launcher, the call
    #: texts given the GradScaler in apex.amp's slot; in the function's file, (function,
    #: parameter) read as apex.amp by the rules (a file the prefilter left out is migrated too)
    amp_value_calls: Tuple[str, ...] = ()
    amp_value_parameters: Tuple[Tuple[str, str], ...] = ()
    #: (function, parameter) of those given the models the launchers initialized: their
    #: calls are the forward passes autocast goes around
    amp_value_models: Tuple[Tuple[str, str], ...] = ()
    #: in a launcher: (call text, why) for the calls giving apex.amp to such a function that
    #: the route is not proven for
    amp_value_refusals: Tuple[Tuple[str, str], ...] = ()
    #: (``Class.method`` of this file that reads ``amp.master_params`` and scales no loss,
    #: where a call of it in another file is: file and definition): it cannot unscale the
    #: gradients itself (``gradient_helpers_plan``)
    helpers_called_elsewhere: Tuple[Tuple[str, str], ...] = ()
    #: (method of this file that scales a loss, the arguments of each call of it in the
    #: repository, marked forward outputs or not: ``forward_fed``)
    handed_calls: Tuple[Tuple[str, Tuple[HandedArgs, ...]], ...] = ()
    #: (class, method, overriding class and its file) for the methods of this file's classes
    #: that scale a loss which a subclass in some walked file redefines (``override_plan``)
    overridden: Tuple[Tuple[str, str, str], ...] = ()
    #: (class, method) of this file that scale a loss over an optimizer they are handed, which
    #: only their own class calls, on self (``self_called_plan``): their calls are followed
    #: to the steps of what they pass
    self_called_only: Tuple[Tuple[str, str], ...] = ()
    #: (class, method, where a call of it is) of those another file calls
    scaling_called_elsewhere: Tuple[Tuple[str, str, str], ...] = ()
    #: (call text, the flags it adds) of the parser factories of other files this file calls
    #: (``parser = get_argument_parser()``): their defaults are those of the script's flags
    #: (``parser_factories``, read by ``rules/_default_flags``)
    parser_factories: Tuple[Tuple[str, FlagDefaults], ...] = ()
    #: the only file of the repository naming apex.amp, importable, initializing in one
    #: top-level function: the sites no call chain reaches may read a module-level GradScaler
    #: (``module_scaler_plan``)
    module_scaler: bool = False
    #: in a file that only initializes (a guest of that route): the dotted name of the home
    #: module whose variable ``scaler_name`` its initialize assigns
    module_home: str = ""
    #: in the home of that route: why it is not taken after all (another file uses apex.amp)
    module_refusal: str = ""
    #: in a file with sites but no initialize whose home scales nothing itself (the reader
    #: route, ``module_scaler_plan.reader_route``): the dotted name it reads the home's
    #: variable ``scaler_name`` through
    module_reader: str = ""
    #: a reader the home imports itself: the functions that read the variable import the
    #: home when they run (an import at its top could run while the home is half made)
    reader_local: bool = False
    #: a reader that imports the home as ``from <package> import <name>``: that name, which its
    #: sites read the variable through (else they read it through ``module_reader``)
    reader_bound: str = ""
    #: in the home of the reader route: the files that read its variable (shown paths)
    module_readers: Tuple[str, ...] = ()
    #: in the home of the reader route: its initialize's num_losses comes in a ``**`` dict, so
    #: its list of GradScalers is sized from that dict when it runs
    losses_at_run_time: bool = False
    #: names the rule may keep the GradScaler or its switch under on ``self`` that a class of
    #: another file deriving from one of this file's classes using amp, or one they derive
    #: from, reads or sets as an attribute (``family_names``)
    family_attributes: Tuple[str, ...] = ()
    #: with ``handed_calls``: the methods of its scaling classes' family that may reach a
    #: backward or a step (``stepping_methods``): the callers' autocast regions stop there
    stepping_methods: Tuple[str, ...] = ()
    #: module-level apex.amp names of this file that other files take from it (import by
    #: name, ``module.amp``, a star import), each with those files' shown paths: the import
    #: stays, on the shim (``amp_reexports``)
    amp_importers: Tuple[Tuple[str, str], ...] = ()

    @property
    def reader_access(self) -> str:
        """What a reader of the module-scaler route reads the home's variable through."""
        return self.reader_bound or self.module_reader

    @property
    def reader_import(self) -> str:
        """The import line a reader of the module-scaler route reads the home through."""
        package, _, name = self.module_reader.rpartition(".")
        return f"from {package} import {name}\n" if self.reader_bound else f"import {self.module_reader}\n"

    @property
    def takes_scaler(self) -> bool:
        """Whether some definition of this file receives the GradScaler from another file."""
        return bool(self.entries or self.method_entries or self.carried)

    def keyword_for(self, call_text: str) -> Optional[str]:
        return dict(self.pass_to).get(call_text)

    def note_for(self, name: str) -> Optional[str]:
        notes = dict(self.notes)
        return notes.get(name, notes.get(ANY_DEFINITION))

    def dropped(self, reason: str) -> "FilePlan":
        """This file without its planned part, noting ``reason`` at every site; a file of the
        module-scaler reader route (APX252, a fallback) keeps the notes it had before it, each
        with ``reason`` added."""
        notes: Tuple[Tuple[str, str], ...] = ((ANY_DEFINITION, reason),)
        if (self.module_reader or self.module_readers) and self.notes:
            notes = tuple(
                (name, f"{note}; nor can a module-level GradScaler stand in ({reason})") for name, note in self.notes
            )
        return FilePlan(
            notes=notes,
            optimizer_wrappers=self.optimizer_wrappers,
            carrier=self.carrier.alone() if self.carrier is not None else None,
            # a class whose subclasses in other files keep apex.amp keeps it too, as does a
            # launcher that passed the GradScaler to other files: they share the apex.amp
            # state its initialize sets up
            refusal=reason if self.heir_base or self.pass_to else "",
            used_elsewhere=self.used_elsewhere,
            helpers_called_elsewhere=self.helpers_called_elsewhere,
            handed_calls=self.handed_calls,
            overridden=self.overridden,
            self_called_only=self.self_called_only,
            scaling_called_elsewhere=self.scaling_called_elsewhere,
            parser_factories=self.parser_factories,
            step_heir_refusal=self.step_heir_refusal,
            override_step_gaps=self.override_step_gaps,
            family_attributes=self.family_attributes,
            stepping_methods=self.stepping_methods,
        )


@dataclass
class RepoPlan:
    files: Dict[str, FilePlan] = field(default_factory=dict)
    #: definition -> why it cannot get the scaler (for the per-file report)
    unplanned: Dict[Def, str] = field(default_factory=dict)
    #: files without apex.amp that call a model factory: real path -> (the factory's
    #: component, the edit that keeps their calls working, ``factory_callers``)
    caller_edits: Dict[str, List[Tuple[int, CallerEdit]]] = field(default_factory=dict)
    #: the holder route: real path of the holder class's file (no apex.amp in it) -> (the
    #: launcher's component, the edit, the launcher's shown path)
    holder_edits: Dict[str, Tuple[int, HolderEdit, str]] = field(default_factory=dict)
    #: the step-heir route: real path of a subclass's file (no apex.amp in it) -> (the
    #: launcher's component, the edit, the base class's name)
    step_heir_edits: Dict[str, Tuple[int, HolderEdit, str]] = field(default_factory=dict)
    #: the bound-backward route: real path of the class's file (no apex.amp in it) -> (the
    #: launcher's component, the edit, the launcher's shown path)
    bound_edits: Dict[str, Tuple[int, HolderEdit, str]] = field(default_factory=dict)
    #: the runner-hook route: real path of the run step's file (no apex.amp in it) -> (the
    #: launcher's component, the edit, the launcher's shown path)
    runner_step_edits: Dict[str, Tuple[int, HolderEdit, str]] = field(default_factory=dict)
    #: the override-step route: real path of the overriding subclass's file (no apex.amp in
    #: it) -> (the launcher's component, the edit, the base class's name)
    override_step_edits: Dict[str, Tuple[int, HolderEdit, str]] = field(default_factory=dict)
    #: the probe gate (``probe_gate_plan``): real path of a probe's file -> the edits of the files
    #: re-exporting its probe, made once that file came out native
    reexport_edits: Dict[str, List[HolderEdit]] = field(default_factory=dict)

    def without(self, component: int) -> None:
        self.files = {p: f for p, f in self.files.items() if f.component != component}

    def add_notes(self, notes: Dict[str, Dict[str, str]]) -> None:
        """Why-not notes for files without a planned part (a planned file keeps its plan)."""
        for path, by_name in notes.items():
            if path not in self.files:
                self.files[path] = FilePlan(notes=tuple(sorted(by_name.items())))


def handed_away(user: ModuleSummary, local: str, owner: Optional[ModuleSummary], name: str) -> bool:
    """Whether ``user`` uses ``local`` (denoting ``name`` of ``owner``) other than by calls:
    passed on, stored, or a method read through the class (``GAN.train_step``, a class method);
    reading a class attribute or a static method (``GAN.LATENT``, ``GAN.real_batch(...)``)
    does not hand the class away."""
    if local in user.escaping:
        return True
    reads = user.attribute_reads.get(local, set())
    if not reads or owner is None:
        return False
    if name in owner.classes:
        return bool(reads & owner.plain_methods.get(name, set()))
    return name in owner.functions


def _callers_elsewhere(name: str, module_path: str, others: Sequence[Tuple[str, str, bytes]], definitions):
    """Where files outside the index refer to ``name`` of ``module_path``: (path, shown, line,
    calling definition); line 0 where it is used as a value there (subclassed, passed on)."""
    found = []
    needle = name.encode()
    for path, shown, source in others:
        if needle not in source:
            continue
        summary = definitions.summary(path)  # read once, shared with the re-export search
        if summary is None:
            continue
        for local, (module, attr) in summary.imports.items():
            text = local if attr == name else f"{local}.{name}" if not attr else None
            if text is None or definitions.find(module, attr or name, path) != (module_path, name):
                continue
            calls = [c for c in summary.calls if c.text == text]
            if calls:
                found.append((path, shown, calls[0].line, calls[0].owner))
            elif attr and handed_away(summary, local, definitions.summary(module_path), name):
                found.append((path, shown, 0, MODULE_LEVEL))  # imported and used as a value (a re-export is not)
        for local, dotted in module_locals(summary, definitions, path).items():
            # ``hooks.Hook(...)`` through a module the file imports (by ``from pkg import hooks`` too)
            if definitions.find(dotted, name, path) != (module_path, name):
                continue
            calls = [c for c in summary.calls if c.text == f"{local}.{name}"]
            if calls and summary.imports[local][1]:
                found.append((path, shown, calls[0].line, calls[0].owner))
            elif read_as_value(summary, local, name):
                found.append((path, shown, 0, MODULE_LEVEL))
    return found


class _Definitions:
    """Where an imported name is defined among the indexed files, following re-exports
    (``from .cuda import ApexScaler`` in a package's ``__init__.py``) through files the index
    left out, which are read only then."""

    HOPS = 4

    def __init__(self, by_path: Dict[str, ModuleSummary], unindexed: Dict[str, Tuple[str, bytes]], resolver) -> None:
        self.unindexed = unindexed
        self.resolver = resolver
        self.read: Dict[str, Optional[ModuleSummary]] = {}
        self.heads: Dict[str, Optional[ImportHead]] = {}
        self.resolved: Dict[str, Optional[ModuleSummary]] = {}
        self._naming: Dict[str, FrozenSet[str]] = {}
        self.raw_by_path = by_path
        self.stars = StarImports(self._raw, resolver)
        #: the indexed files' summaries, their star-imported names read as imports by name
        self.by_path = {p: self._resolved(s) for p, s in by_path.items()}

    def _resolved(self, summary: ModuleSummary) -> ModuleSummary:
        """``summary`` with its proven star-imported names and submodule calls read as
        imports and calls."""
        return with_submodule_calls(self.stars.resolved(summary), self.resolver, self._raw, self.stars)

    def _raw(self, path: str) -> Optional[ModuleSummary]:
        """The summary of ``path`` as the index read it (None outside the walked files)."""
        if path in self.raw_by_path:
            return self.raw_by_path[path]
        if path not in self.unindexed:
            return None
        if path not in self.read:
            shown, source = self.unindexed[path]
            self.read[path] = summarise(path, shown, source)
        return self.read[path]

    def _head(self, path: str) -> Optional[ImportHead]:
        """The import head of ``path`` (``import_heads``) where it answers ``find_at`` as its
        summary would and the summary is not read yet: a file the index left out that
        parses and star-imports nothing (a star import may bind any name, after a def too)."""
        if path in self.by_path or path in self.read or path not in self.unindexed:
            return None
        if path not in self.heads:
            self.heads[path] = import_head(path, self.unindexed[path][1])
        head = self.heads[path]
        return head if head is not None and not head.star_imports else None

    def imports_none_of(self, path: str, targets: Set[str]) -> bool:
        """Whether the file ``path`` the index left out provably imports nothing from the files
        ``targets``, by name or as a module (told from its import statements alone; False
        where they do not tell: a star import, a file already summarised or not parsed)."""
        head = self._head(path)
        if head is None:
            return False
        resolve = self.resolver.resolve
        for module, attr in head.imports.values():
            if resolve(module, path) in targets or (attr and resolve(f"{module}.{attr}", path) in targets):
                return False
        return True

    def naming(self, word: str) -> FrozenSet[str]:
        """The files the index left out whose text holds the identifier ``word`` (not as part
        of a longer ASCII identifier: ``amp`` is not in ``example``), searched once per run."""
        if word not in self._naming:
            needle = word.encode()
            self._naming[word] = frozenset(
                p for p, (_shown, source) in self.unindexed.items() if holds_word(source, needle)
            )
        return self._naming[word]

    def raw(self, path: str) -> Optional[ModuleSummary]:
        """The summary of ``path`` with its star imports as written (None outside the walked files)."""
        return self._raw(path)

    def summary(self, path: str) -> Optional[ModuleSummary]:
        if path in self.by_path:
            return self.by_path[path]
        if path not in self.resolved:
            raw = self._raw(path)
            self.resolved[path] = self._resolved(raw) if raw is not None else None
        return self.resolved[path]

    def find(
        self, module: str, name: str, importer: str, anywhere: bool = False, through_stars: bool = False
    ) -> Optional[Def]:
        """The definition ``module.name`` denotes in ``importer``: in an indexed file, or with
        ``anywhere`` in any walked file; with ``through_stars`` also through a package's
        ``from .x import *`` (only to say why a definition is not followed: the plan does not
        follow those)."""
        target = self.resolver.resolve(module, importer)
        return self.find_at(target, name, anywhere, through_stars) if target is not None else None

    def find_at(self, target: str, name: str, anywhere: bool = False, through_stars: bool = False) -> Optional[Def]:
        """The definition ``name`` denotes in the file ``target`` (``find`` after resolving)."""
        module, importer = "", target
        for hop in range(self.HOPS):
            if hop:
                target = self.resolver.resolve(module, importer)
            head = self._head(target) if target is not None else None
            if head is not None:
                if name in head.definitions:
                    return (target, name) if anywhere else None
                if name not in head.imports or not head.imports[name][1]:
                    return None
                module, name = head.imports[name]
                importer = target
                continue
            summary = self.summary(target) if target is not None else None
            if summary is None:
                return None
            if name in summary.functions | summary.classes:
                kind, later = self.stars.binder(target, name, after=summary.def_lines.get(name, 0))
                if kind == NOT_BOUND:
                    return (target, name) if target in self.by_path or anywhere else None
                if kind == UNKNOWN:
                    return None
                module = later  # a star import after the def binds the name again
            elif name in summary.imports and summary.imports[name][1]:
                module, name = summary.imports[name]
            else:
                kind, module = self.stars.binder(target, name)
                if kind != BINDS:
                    module = (self._star_source(summary, target, name) if through_stars else None) or ""
                if not module:
                    return None
            importer = target
        return None

    def star_why(self, module: str, name: str, importer: str) -> Optional[str]:
        """Why ``module.name`` in ``importer`` is not followed through the star imports that
        re-export it, when one of them gives an unknown answer."""
        for _ in range(self.HOPS):
            target = self.resolver.resolve(module, importer)
            summary = self.summary(target) if target is not None else None
            if summary is None or name in summary.functions | summary.classes:
                return None
            if name in summary.imports and summary.imports[name][1]:
                module, name = summary.imports[name]
            else:
                kind, detail = self.stars.binder(target, name)
                if kind != BINDS:
                    return detail or None
                module = detail
            importer = target
        return None

    def _star_source(self, summary: ModuleSummary, path: str, name: str) -> Optional[str]:
        """The module a ``from module import *`` of ``path`` (a package's ``__init__.py``:
        ``from .trainer import *``) takes the public ``name`` from, when exactly one of them
        defines or imports it."""
        if name.startswith("_"):
            return None
        found = []
        for module in sorted(summary.star_imports):
            target = self.resolver.resolve(module, path)
            other = self.summary(target) if target is not None else None
            if other is not None and (name in other.functions | other.classes or name in other.imports):
                found.append(module)
        return found[0] if len(found) == 1 else None


def _needy(
    by_path: Dict[str, ModuleSummary],
    launchers: Set[str],
    callers: Dict[Def, List[Tuple[Def, int]]],
    optional: Set[Def] = frozenset(),  # type: ignore[assignment]
    reached: Set[Def] = frozenset(),  # type: ignore[assignment]
    built_only: Set[Def] = frozenset(),  # type: ignore[assignment]
) -> Set[Def]:
    """The definitions that need the GradScaler: those with amp sites outside the launchers,
    and upwards every definition that calls one (but a launcher's).  An ``optional`` one
    passes the need on only to its callers the GradScaler reaches; a class of ``built_only``
    (its methods take the GradScaler) to none of the definitions that build it."""
    needy: Set[Def] = set()
    work = [
        (p, owner)
        for p, s in by_path.items()
        if p not in launchers and not s.training_inits
        for owner in s.owners_needing_scaler()
        if owner != MODULE_LEVEL
    ]
    while work:
        item = work.pop()
        if item in needy:
            continue
        needy.add(item)
        path, name = item
        summary = by_path[path]
        for owner, called in summary.local_calls.items():
            if name in called and owner != MODULE_LEVEL and path not in launchers:
                work.append((path, owner))
        for caller, _line in callers.get(item, []):
            if (caller[0] not in launchers and caller[1] != MODULE_LEVEL and item not in built_only
                    and (item not in optional or caller in reached)):
                work.append(caller)
    return needy


def _optional_entries(
    entries: Dict[Def, List[Tuple[Def, int]]], local_callers, reached: Set[Def], launchers: Set[str],
    needy: Set[Def], edges, by_path: Dict[str, ModuleSummary], definitions: "_Definitions",
    others: Sequence[Tuple[str, str, bytes]],
) -> Set[Def]:
    """The entries that take the GradScaler as ``scaler=None`` (``optional_scaler``): some
    call of each has it, and every other file naming it runs only where no training
    initialize runs."""
    found: Set[Def] = set()
    around: Optional[_AroundLaunchers] = None
    for item, calls in sorted(entries.items()):
        if local_callers(item) or not saves_or_loads_only(item, by_path, edges, needy):
            continue
        if not any(c[0] in launchers or c in reached for c, _line in calls):
            continue  # no call has a GradScaler: nothing to pass
        users, why = users_of(walked_files(by_path, definitions, (item[1],)), definitions, item[0], item[1])
        # a file that only re-exports it (a package's ``__init__.py``) uses it nowhere itself;
        # one the calls above do not cover (a star import, a file without apex) is checked whole
        used = {p for p, local in users if _uses_name(definitions.summary(p), local)}
        without = {c[0] for c, _line in calls if c[0] not in launchers and c not in reached}
        without |= used - {c[0] for c, _line in calls}
        if why or not without:
            continue
        around = around or _AroundLaunchers(by_path, others)
        if all(runs_alone(p, definitions, around.files_importing) is None for p in sorted(without)):
            found.add(item)
    return found


def _self_kept_bases(
    candidates: Set[Def], by_path, definitions, launchers: Set[str], callers, local_callers, others, held,
) -> Tuple[Dict[Def, Def], Dict[Def, str]]:
    """The base classes among ``candidates`` (needy, called by nobody) whose methods read the
    GradScaler a launcher's class deriving from them keeps on self (``init_base_plan``):
    base -> that class; and why not for those of that shape the route refuses."""
    kept: Dict[Def, Def] = {}
    why_not: Dict[Def, str] = {}

    def called(item: Def) -> str:
        for (path, owner), line in callers.get(item, ()):
            where = f"{by_path[path].shown}:{line}"
            return f"{where}, in {owner}" if owner != MODULE_LEVEL else where
        if item[0] in by_path and local_callers(item):
            return f"{by_path[item[0]].shown}, in {local_callers(item)[0][1]}"
        return ""

    def runtime_built(item: Def) -> str:
        return _runtime_note(item[0], item[1], by_path, others, definitions).lstrip("; ")

    for base in sorted(candidates):
        if base[1] not in by_path[base[0]].classes or local_callers(base):
            continue
        route = self_kept_route(base, by_path, definitions, launchers, called,
                                lambda n, p: _callers_elsewhere(n, p, others, definitions), runtime_built)
        if isinstance(route, str):
            why_not[base] = route
        elif route is not None and route[0] == base[0]:
            continue  # the launcher's own file: its rules keep the GradScaler themselves
        elif route is not None and route[0] in held:
            why_not[base] = f"{by_path[route[0]].shown} keeps apex.amp ({held[route[0]]})"
        elif route is not None:
            kept[base] = route
    return kept, why_not


def _base_of_initializer(path: str, name: str, by_path, definitions, why: str = "") -> str:
    """DL-Art-School's ``BaseModel``: a class whose methods only save or load amp's state on
    ``self``, derived from by a class of another file that initializes amp in a method.  The
    words for why its methods read no GradScaler that class keeps on self (``why``, from
    ``init_base_plan``), else why no route lends it one, naming a sibling class that derives
    from the base and initializes nothing; "" for any other class."""
    family = derived_classes((path, name), by_path, definitions)
    initializing = initializing_heirs((path, name), by_path, family)
    if not initializing:
        return ""
    heir_path, heir = initializing[0]
    if why:
        return base_words(initializing[0], by_path, why)
    words = (
        f"a base class whose methods only save or load amp's state on self, derived from by {heir} in "
        f"{by_path[heir_path].shown}, which initializes amp in a method; no route keeps that GradScaler on self for "
        "the base's methods (only subclasses handed it through their constructor lend it to their base)"
    )
    plain = [(p, c) for p, c in sorted(family - {(path, name)}) if (p, c) not in initializing
             and not _derives_from_any(p, c, initializing, by_path, definitions)]
    if plain:
        summary = definitions.summary(plain[0][0])
        shown = summary.shown if summary is not None else "another file"
        words += f", and {plain[0][1]} in {shown} derives from it too and initializes nothing"
    return words


def _derives_from_any(path: str, cls: str, bases, by_path, definitions) -> bool:
    return any((path, cls) in derived_classes(base, by_path, definitions) for base in bases)


def _uses_name(summary: Optional[ModuleSummary], local: str) -> bool:
    """``local`` is called, handed on or read from in ``summary``, not only imported."""
    return summary is None or bool(
        local in summary.called_names or local in summary.escaping or local in summary.attribute_reads
    )


def _note_unreachable(
    needy, callers, local_callers, by_path, launchers, notes: Dict[str, Dict[str, str]], others=(), definitions=None,
    edges=None, kept_why: Optional[Dict[Def, str]] = None,
) -> None:
    """Why a definition that scales a loss (a train step class registered by a decorator and
    called through the registry with the task) gets no GradScaler: no call in the repository
    reaches it.  With one launcher, its note says where its losses are scaled (through which
    unreached definition, when that one only calls the one that scales)."""
    orphans = sorted(d for d in needy if d not in callers and not local_callers(d))
    how: Dict[Def, str] = {}
    for path, name in orphans:
        how[(path, name)] = _why_unreached(path, name, by_path, others, definitions, kept_why)
        notes.setdefault(path, {}).setdefault(
            name, f"{name} is {how[(path, name)]}, so the GradScaler cannot follow its callers"
        )
    # a definition its own file calls only from such an orphan (a library's step function
    # that create_supervised_trainer builds) says where that chain starts
    for path, name in sorted(d for d in needy if d not in callers and local_callers(d)):
        if name in (by_path[path].all_names or ()):  # exported itself: outside callers, whatever calls it here
            how[(path, name)] = _why_unreached(path, name, by_path, others, definitions, kept_why)
            notes.setdefault(path, {}).setdefault(
                name, f"{name} is {how[(path, name)]}, so the GradScaler cannot follow its callers"
            )
            continue
        chain, seen = [(path, name)], {(path, name)}
        while chain and chain[-1] not in how:
            nxt = [c for c in local_callers(chain[-1]) if c not in seen and c in needy and c not in callers]
            if len(nxt) != 1 or len(local_callers(chain[-1])) != 1:
                break
            seen.add(nxt[0])
            chain.append(nxt[0])
        if len(chain) > 1 and chain[-1] in how:
            top = chain[-1][1]
            notes.setdefault(path, {}).setdefault(
                name, f"{name} is called only by {top} of this file, which is {how[chain[-1]]}, so the GradScaler "
                "cannot follow its callers"
            )
    if len(launchers) == 1 and orphans:
        path, name = orphans[0]
        more = f" and {len(orphans) - 1} more" if len(orphans) > 1 else ""
        site = _scaling_callee((path, name), by_path, edges or {})
        if site is None:
            where = f"{by_path[path].shown} ({name}){more}, which is {how[orphans[0]]}"
        else:
            where = (f"{by_path[site[0]].shown} ({site[1]}), reached through {by_path[path].shown} ({name}){more}, "
                     f"which is {how[orphans[0]]}")
        notes.setdefault(next(iter(launchers)), {})[SCALED_ELSEWHERE] = (
            f"no amp.scale_loss in this file: the losses are scaled in {where}: the GradScaler cannot reach it"
        )


def _note_blind_call(path: str, summary: ModuleSummary, call, definitions: "_Definitions", blind: Dict[Def, str]) -> None:
    """A call through a module name several files of the repository answer to (which one the
    import finds depends on sys.path): each definition it may call cannot be handed the
    GradScaler along it, so it keeps apex.amp (``blind``: callee -> why)."""
    found = definitions.resolver.candidates(call.module, path)
    if len(found) < 2:
        return
    for target in found:
        callee = definitions.find_at(target, call.name)
        if callee is not None and callee[0] != path:
            shown = ", ".join((definitions.summary(p) or ModuleSummary(p, p)).shown for p in found)
            blind.setdefault(callee, (
                f"{call.name} is called from {summary.shown}:{call.line} ({call.owner}) through {call.module}, a "
                f"module name {len(found)} files of the repository answer to ({shown}): which one the import finds "
                "depends on sys.path, so no GradScaler can be sent along that call"
            ))


def _note_unbuilt(built, by_path: Dict[str, ModuleSummary], launchers: Set[str], notes) -> None:
    """The built-object route's refusals: on the class, and on its launcher."""
    for path, by_name in sorted(built.notes.items()):
        for name, reason in sorted(by_name.items()):
            notes.setdefault(path, {})[name] = f"{reason}, so the GradScaler cannot reach it on the object built"
            if len(launchers) == 1:
                notes.setdefault(next(iter(launchers)), {})[SCALED_ELSEWHERE] = (
                    f"no amp.scale_loss in this file: the losses are scaled in {by_path[path].shown} ({name}), "
                    f"which cannot get the GradScaler: {reason}"
                )


def _scaling_function(summary: ModuleSummary, name: str) -> bool:
    """``name`` is a top-level function of ``summary`` that scales a loss itself or through
    the definitions of its file it calls, or a class of no base whose methods scale one (a
    loss scaler class: ``ApexScaler.__call__(loss, optimizer)``; a subclass reads what its
    base keeps instead)."""
    standalone = name in summary.classes and summary.class_bases.get(name, ()) in ((), ("object",))
    if name not in summary.functions and not standalone:
        return False
    scaling = {s.owner for s in summary.amp_sites if s.member == "scale_loss"}
    seen, work = {name}, [name]
    while work:
        current = work.pop()
        if current in scaling:
            return True
        for callee in summary.local_calls.get(current, ()):
            if callee not in seen:
                seen.add(callee)
                work.append(callee)
    return False


def _state_function(summary: ModuleSummary, name: str) -> bool:
    """``name`` is a top-level function of ``summary`` whose amp sites only save or load the
    amp state (``save_checkpoint(...)`` writing ``amp.state_dict()``)."""
    members = {s.member for s in summary.amp_sites if s.owner == name}
    return name in summary.functions and bool(members) and members <= STATE_MEMBERS


def _scaling_callee(item: Def, by_path: Dict[str, ModuleSummary], edges) -> Optional[Def]:
    """The definition of another file ``item`` calls (through others) that uses amp itself,
    when ``item`` does not; None when ``item`` does or none is found."""
    if item[1] in by_path[item[0]].owners_needing_scaler():
        return None
    seen, work = {item}, [item]
    while work:
        for callee, _text in sorted(edges.get(work.pop(0), [])):
            if callee in seen:
                continue
            if callee[1] in by_path[callee[0]].owners_needing_scaler():
                return callee
            seen.add(callee)
            work.append(callee)
    return None


def _calls_shown(outside: Sequence[Tuple[str, str, int, str]], most: int = 3) -> str:
    """Every file of ``outside`` (``_callers_elsewhere``) that calls the definition, one place
    each (``train.py:59, in train``): each of them would have to hand the GradScaler on, so the
    reason names them all, up to ``most`` and a count of the rest."""
    places = [
        f"{shown}:{line}, in {owner}" if owner != MODULE_LEVEL else shown
        for _path, shown, line, owner in outside
        if line
    ]
    rest = len(places) - most
    return "; ".join(places[:most]) + (f"; and {rest} more" if rest > 0 else "")


def _runtime_note(path: str, name: str, by_path, others, definitions) -> str:
    """Where ``name`` of ``path``, or a class deriving from it, is built from a module
    imported by name at run time (``runtime_classes``), as a clause of the reason; "" where
    nowhere."""
    names = {n for _p, n in derived_classes((path, name), by_path, definitions)}
    indexed = [(summary.shown, summary.runtime_builds) for _p, summary in sorted(by_path.items())]
    where = runtime_build_of(names, indexed, [(shown, source) for _p, shown, source in others])
    if where is None:
        return ""
    shown, line, owner, built, spelling = where
    what = "it" if built == name else f"{built}, which derives from it,"
    return (f"; {what} is built as {spelling} of a module imported by name at run time ({shown}:{line}, "
            f"in {owner}): which class that is, no GradScaler route can tell")


def _no_launcher_why(summary: ModuleSummary, several_why: Dict[str, str]) -> str:
    """Why a file with training initializes hands no GradScaler on, as a clause: its
    initializes are in several definitions (``several_launchers``), or in one that also
    scales; "" otherwise."""
    owners = sorted({s.owner for s in summary.training_inits})
    if len(owners) > 1:
        why = several_why.get(summary.path, "they are not each in a function of their own, once or in sequence, "
                              "in a file that scales no loss itself")
        return (f": {summary.shown} initializes amp in several functions ({', '.join(owners)}), and no GradScaler "
                f"route plans for it ({why})")
    return ""


def _why_unreached(path: str, name: str, by_path, others, definitions, kept_why=None) -> str:
    """How ``name`` of ``path``, which no file using apex calls, is reached instead
    (``kept_why``: why a base class of a launcher's class reads no GradScaler it keeps)."""
    if definitions is not None:
        lender = _base_of_initializer(path, name, by_path, definitions, (kept_why or {}).get((path, name), ""))
        if lender:
            return lender
    if name in by_path[path].escaping - by_path[path].super_only:
        return f"{by_path[path].handed_away(name)}, never called directly"
    if definitions is not None:
        for other_path, other in by_path.items():
            for local, (module, attr) in other.imports.items():
                if (
                    attr == name
                    and local in other.escaping
                    and definitions.find(module, attr, other_path, through_stars=True) == (path, name)
                ):
                    return (f"subclassed, passed on or stored in {other.shown}, never called directly"
                            + _runtime_note(path, name, by_path, others, definitions))
        outside = _callers_elsewhere(name, path, others, definitions)
        if outside:
            _path, shown, line, owner = outside[0]
            if not line:
                return (f"subclassed, passed on or stored in {shown}, a file without apex.amp, never called directly"
                        + _runtime_note(path, name, by_path, others, definitions))
            return f"called only from files without apex.amp ({_calls_shown(outside)}), where no GradScaler exists"
        for other_path, other in sorted(by_path.items()):
            if other_path == path:
                continue
            for local, attributes in sorted(other.attribute_reads.items()):
                module, attr = other.imports.get(local, ("", ""))
                # ``default_backward.amp_backward`` read, not called: handed on as a value
                if name in attributes and module and definitions.find(
                    f"{module}.{attr}" if attr else module, name, other_path
                ) == (path, name):
                    if attr and name not in other.attribute_values:
                        # only called so: ``from pkg import hooks`` then ``hooks.Hook(...)``, where
                        # the package's ``__init__.py`` may bind ``hooks`` to something else
                        return (f"called as {local}.{name}(...) in {other.shown}, through `from {module} import "
                                f"{attr}`, where the package may bind {attr} itself rather than its submodule: "
                                "no GradScaler route follows that call")
                    return f"read as {local}.{name} in {other.shown} and passed on as a value, never called directly"
            for module in sorted(other.star_imports):
                if name in other.called_names and definitions.find(module, name, other_path) == (path, name):
                    why = definitions.stars.why_not(other_path, name) or "the star import is not proven to bind it"
                    return (f"called in {other.shown}, which imports it with `from {module} import *`, but "
                            f"{why}")
            for local, (module, attr) in sorted(other.imports.items()):
                if (
                    attr == name
                    and local in other.called_names
                    and definitions.find(module, attr, other_path) is None
                    and definitions.find(module, attr, other_path, through_stars=True) == (path, name)
                ):
                    why = definitions.star_why(module, attr, other_path) or "the star import is not proven to bind it"
                    return (f"called in {other.shown}, which imports it from {module}, a package that re-exports it "
                            f"with a star import, but {why}")
    if name in (by_path[path].all_names or ()):
        return (f"exported by the __all__ of {by_path[path].shown}: code outside the repository may call it after "
                "an amp.initialize of its own, which no GradScaler of this repository can follow")
    if any(c.text == name and c.guarded for c in by_path[path].plain_calls):
        return 'run only as its file\'s script (under `if __name__ == "__main__":`), where no GradScaler exists'
    if definitions is not None:
        for other_path, other in sorted(by_path.items()):
            local = module_handed_on(other_path, other, path, definitions)
            if local:
                return (f"never called by name: {other.shown} hands its module ({local}) on as a value "
                        "(getattr, a registry), and which definition that builds is not followed")
    note = _runtime_note(path, name, by_path, others, definitions) if definitions is not None else ""
    return f"called directly from no file{note}" if note else "called from no file"


def _built_as_subclasses(
    candidates: Set[Def], by_path: Dict[str, ModuleSummary], definitions: "_Definitions",
    others: Sequence[Tuple[str, str, bytes]], local_callers, state_only: Callable[[Def], bool],
) -> Dict[Def, List[Tuple[Def, int]]]:
    """The classes among ``candidates`` no file builds or names but as the base of its own
    subclasses (Enigmatisms/NeRF: ``NeRF`` in nerf_base.py, built as ``MipNeRF`` of
    mip_model.py), whose methods only save or load the amp state (``state_only``), with the
    constructions of those subclasses in the indexed files, as ``callers`` has them: an
    instance of a subclass is one of the class, whose methods the subclasses' instances call
    (``_method_route`` follows each call to the class defining the method)."""
    found: Dict[Def, List[Tuple[Def, int]]] = {}
    for item in sorted(candidates):
        path, name = item
        if name not in by_path[path].classes or local_callers(item) or not state_only(item):
            continue
        family = derived_classes(item, by_path, definitions) - {item}
        if not family:
            continue
        homes = {p for p, _c in family}
        uses = _callers_elsewhere(name, path, others, definitions)
        if any(line or use_path not in homes for use_path, _shown, line, _owner in uses):
            continue  # built, called or handed on elsewhere than in a subclass's own file
        if any(
            definitions.find(module, attr, other_path) == item
            for other_path, other in by_path.items() if other_path not in homes
            for local, (module, attr) in other.imports.items()
            if attr == name and handed_away(other, local, by_path[path], name)
        ):
            continue
        calls: List[Tuple[Def, int]] = []
        for user_path, user in by_path.items():
            for call in user.calls:
                if definitions.find(call.module, call.name, user_path, anywhere=True) in family:
                    calls.append(((user_path, call.owner), call.line))
        if calls:
            found[item] = calls
    return found


def _built_before_the_scaler(item: Def, calls: List[Tuple[Def, int]], by_path: Dict[str, ModuleSummary]) -> bool:
    """Every construction of the class ``item`` is in a launcher, before its amp.initialize in
    the same definition: the instance exists before the GradScaler, so its ``__init__`` cannot
    take it."""
    if item[1] not in by_path[item[0]].classes or not calls:
        return False
    for (caller_path, caller_def), line in calls:
        inits = [s.line for s in by_path[caller_path].training_inits if s.owner == caller_def]
        if not inits or line >= min(inits):
            return False
    return True


def _method_route(
    item: Def,
    by_path: Dict[str, ModuleSummary],
    launchers: Set[str],
    others: Sequence[Tuple[str, str, bytes]],
    definitions: "_Definitions",
    alone: Optional[Callable[[str, str], Optional[str]]] = None,
    peers: FrozenSet[Def] = frozenset(),
    relied: Optional[Dict[Def, str]] = None,
):
    """The methods of the class ``item`` that scale losses, the calls that must pass them
    the GradScaler (``(launcher, "model.train_step")``) and whether they take it as
    ``scaler=None``, when every call of those methods is proven: in a launcher, on a name
    bound only to an instance of the class (``model = GAN().to(device)``, then ``model, opt =
    amp.initialize(model, opt)``), and no call elsewhere (not through ``self``, none in the
    files without apex, but in those that run alone where the methods only save or load the
    amp state: ``alone``, None when they do more, says why a file does not); else why not."""
    path, name = item
    owner = by_path[path]
    methods = _scaler_methods(owner, name)
    if not methods or "" in methods:
        return f"{name} uses amp outside its methods"
    shown = " / ".join(f"{name}.{m}" for m in sorted(methods))
    redefined = _redefining_heir(item, methods, by_path, definitions)
    if redefined:
        return redefined
    calls: List[Tuple[str, str]] = []
    optional = False
    for user_path, user in by_path.items():
        for call in user.method_calls:
            if call.method not in methods:
                continue
            if user_path not in launchers:
                why = alone(user_path, call.owner) if alone is not None else ""
                if why is None:
                    optional = True  # a file that runs alone calls it as before
                    continue
                alone_why = f", and that file does not run alone ({why})" if why else ""
                where = in_definition(user.shown, call.owner, user)
                return f"{shown} is also called from {where}, where no GradScaler exists{alone_why}"
            kinds = user.bindings.get((call.owner, call.receiver), [])
            owners = {_method_owner(k, call.method, user_path, user, definitions) for k in kinds if k != SAME_OBJECT}
            where = in_definition(user.shown, call.owner, user)
            if owners == {NO_METHOD}:
                continue  # ``ddp.loadFromFile()``: an AttributeError, with or without a GradScaler
            owners.discard(NO_METHOD)  # where the name holds the wrapper the call fails as before
            if not owners or None in owners or (item in owners and len(owners) > 1):
                return f"{call.receiver}.{call.method}() in {where} is not proven to call {name}.{call.method}"
            if item not in owners:
                # another class's method of that name: this route passes it nothing
                needing = sorted(o for o in owners if _uses_amp_in(o, call.method, by_path))
                if needing:
                    other_path, other = needing[0]
                    why = (f"{call.receiver}.{call.method}() in {where} calls {other}.{call.method} of "
                           f"{by_path[other_path].shown}, which uses amp too, not {name}.{call.method}: no route "
                           "hands the GradScaler to both")
                    if set(needing) <= peers and relied is not None:
                        for peer in needing:  # that class's own method route passes it there
                            relied.setdefault(peer, why)
                        continue
                    return why
                continue
            calls.append((user_path, f"{call.receiver}.{call.method}"))
    for other_path, other_shown, source in others:
        for method in sorted(methods):
            if f".{method}(".encode() in source:
                why = alone(other_path, MODULE_LEVEL) if alone is not None else ""
                if why is not None:
                    alone_why = f", and that file does not run alone ({why})" if why else ""
                    where = f"{other_shown}, where no GradScaler exists{alone_why}"
                    return f"{name}.{method} may also be called from {where}"
                optional = True
    if not calls:
        return f"nothing calls {shown}"
    return sorted(methods), calls, optional


def _scaler_methods(summary: ModuleSummary, cls: str) -> Set[str]:
    """The methods of the class ``cls`` of ``summary`` holding an amp site the GradScaler
    serves ("" for one in the class body itself)."""
    return {s.method for s in summary.amp_sites if s.owner == cls and s.member in SCALER_MEMBERS}


def _redefining_heir(item: Def, methods: Set[str], by_path: Dict[str, ModuleSummary], definitions) -> str:
    """Why a method route cannot take the class ``item``: a subclass in the repository
    redefines one of ``methods`` (its own may run the base's through ``super()`` without the
    GradScaler); "" where none does."""
    for heir in sorted(derived_classes(item, by_path, definitions) - {item}):
        redefined = sorted(methods & definitions.summary(heir[0]).class_members.get(heir[1], set()))
        if redefined:
            return f"{heir[1]} in {definitions.summary(heir[0]).shown} redefines {redefined[0]}() of {item[1]}"
    return ""


def _method_owner(kind: str, method: str, path: str, summary: ModuleSummary, definitions) -> Optional[Def]:
    """The class of the repository whose body defines ``method`` for an instance of the class
    ``kind`` names in ``path`` (a binding's kind): that class, or the first up its chain of
    single bases that defines it; None when the class or a base is not found in the
    repository, or a class of the chain has several bases (no order proven);
    ``NO_METHOD`` for one of torch's module wrappers (``TORCH_WRAPPERS``), on which the call
    raises AttributeError."""
    imported = ".".join(p for p in summary.imports.get(kind, ()) if p)
    if kind in TORCH_WRAPPERS or imported in TORCH_WRAPPERS:
        return NO_METHOD
    if kind in summary.classes:
        cls: Optional[Def] = (path, kind)
    elif kind in summary.imports:
        cls = definitions.find(*summary.imports[kind], path, anywhere=True)
    else:
        return None
    seen: Set[Def] = set()
    while cls is not None and cls not in seen:
        seen.add(cls)
        own = definitions.summary(cls[0])
        if own is None or cls[1] not in own.classes:
            return None
        if method in own.class_members.get(cls[1], set()):
            return cls
        bases = [b for b in own.class_bases.get(cls[1], ()) if b != "object"]
        if len(bases) != 1:
            return None
        cls = _base_def(bases[0], cls[0], own, definitions)
    return None


def _uses_amp_in(owner: Def, method: str, by_path: Dict[str, ModuleSummary]) -> bool:
    """Whether the method ``method`` of the class ``owner`` uses apex.amp itself."""
    summary = by_path.get(owner[0])
    return summary is not None and any(s.owner == owner[1] and s.method == method for s in summary.amp_sites)


def _amp_links(
    by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions: "_Definitions"
) -> List[Tuple[str, str, Def, str, bool]]:
    """``restore(path, model, optimizer, amp=amp)`` in a launcher, where the function of
    another indexed file uses that parameter only to save or load its state (or to test
    whether it was passed): the GradScaler can go in its place, as (launcher, call text,
    function, parameter, whether it reads ``master_params``)."""
    links = []
    for path in sorted(launchers):
        for arg in by_path[path].amp_arguments:
            if arg.receiver:
                continue
            callee = definitions.find(arg.module, arg.name, path)
            if callee is None or callee[0] == path:
                continue
            target = by_path[callee[0]]
            if callee[1] not in target.parameters:
                continue
            positional, kwonly = target.parameters[callee[1]]
            param = arg.keyword or (positional[arg.position] if arg.position < len(positional) else "")
            uses = target.parameter_uses[callee[1]].get(param)
            if uses and uses <= STATE_USES:
                links.append((path, arg.text, callee, param, "master_params" in uses))
    return links


def _consumer_uses(arg: AmpArgument, path: str, by_path: Dict[str, ModuleSummary], definitions) -> Optional[Set[str]]:
    """How the consumer of ``arg`` (a call in ``path`` given apex.amp) uses it: the function
    it calls (its parameter, or the values of its ``**kwargs`` loop), or the method of the
    class the receiver is proven to be an instance of; None when not proven."""
    user = by_path[path]
    if arg.text == "dict" and not arg.receiver:
        return _spread_uses(arg, path, user, definitions)
    if not arg.receiver:
        callee = definitions.find(arg.module, arg.name, path, anywhere=True)
        target = definitions.summary(callee[0]) if callee is not None else None
        if callee is None or target is None or callee[1] not in target.functions:
            return None
        positional, kwonly = target.parameters[callee[1]]
        uses = target.parameter_uses[callee[1]]
    else:
        if arg.owner not in user.functions or arg.receiver in sum(user.parameters[arg.owner], ()):
            return None
        item = _instance_of(user.bindings.get((arg.owner, arg.receiver), []), path, user, definitions)
        target = definitions.summary(item[0]) if item is not None else None
        if item is None or target is None or (item[1], arg.name) not in target.method_parameters:
            return None
        positional, kwonly = target.method_parameters[(item[1], arg.name)]
        uses = target.method_parameter_uses[(item[1], arg.name)]
    if arg.keyword:
        param = arg.keyword if arg.keyword in positional + kwonly else VAR_KEYWORD
    else:
        param = positional[arg.position] if arg.position < len(positional) else ""
    return uses.get(param) or None


def _spread_uses(arg: AmpArgument, path: str, user: ModuleSummary, definitions) -> Optional[Set[str]]:
    """``extra.update(dict(amp=amp))`` then ``Checkpointer(model, **extra)``: how every call
    the dict is spread into uses its keyword (``dict_spreads``): a function's parameter or
    ``**kwargs`` loop, or a class's ``__init__`` parameter or ``**kwargs`` kept on self (its
    methods' uses of the values); None when not proven (``dict`` rebound here, a call not
    of an imported function or class, a class with bases)."""
    spreads = user.dict_spreads.get(arg.line)
    if not spreads or not arg.keyword or "dict" in user.functions | user.classes:
        return None
    found: Set[str] = set()
    for local in spreads:
        module, name = user.imports.get(local, ("", ""))
        callee = definitions.find(module, name, path, anywhere=True) if name else None
        target = definitions.summary(callee[0]) if callee is not None else None
        if callee is None or target is None or callee[1] not in target.parameters:
            return None
        if callee[1] in target.classes and set(target.class_bases.get(callee[1], ())) - {"object"}:
            return None  # a base's methods may use what it keeps
        positional, kwonly = target.parameters[callee[1]]
        param = arg.keyword if arg.keyword in positional + kwonly else VAR_KEYWORD
        uses = target.parameter_uses[callee[1]].get(param)
        if not uses:
            return None
        found |= uses
    return found


def _instance_of(kinds: List[str], path: str, user: ModuleSummary, definitions) -> Optional[Def]:
    """The one class every binding in ``kinds`` builds an instance of: its constructor
    (``TrainingState(...)``) or one of its ``class_factories`` (``TrainingState.load(...)``),
    a class ``path`` imports; None when any binding is something else."""
    found: Set[Def] = set()
    for kind in kinds:
        if kind in (SAME_OBJECT, OTHER):
            return None
        name, _, factory = kind.partition(".")
        item: Optional[Def] = None  # a class of another file (this one's are read by its own rules)
        if name not in user.classes and user.imports.get(name, ("", ""))[1]:
            item = definitions.find(*user.imports[name], path, anywhere=True)
        owner = definitions.summary(item[0]) if item is not None else None
        if item is None or owner is None or item[1] not in owner.classes:
            return None
        if factory and factory not in owner.class_factories.get(item[1], set()):
            return None
        found.add(item)
    return found.pop() if len(found) == 1 else None


def _amp_holders(
    by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions, linked: Set[Tuple[str, str]]
) -> List[Tuple[str, str, bool]]:
    """Calls in a launcher that give apex.amp to a consumer the plan leaves as it is (a
    function of any walked file, its ``**kwargs`` loop, a method of the class the receiver
    is built from), proven to do nothing with it but save/load its state: (launcher, call
    text, whether the consumer may load state into it, so that it needs the converting
    stand-in rather than the GradScaler itself)."""
    proven: Dict[Tuple[str, str], bool] = {}
    loads: Set[Tuple[str, str]] = set()
    for path in sorted(launchers):
        for arg in by_path[path].amp_arguments:
            key = (path, arg.text)
            if key in linked:
                continue
            uses = _consumer_uses(arg, path, by_path, definitions)
            # one call text, one rewrite: every call so written must be proven
            proven[key] = proven.get(key, True) and bool(uses) and uses <= HOLDER_USES  # type: ignore[operator]
            if uses and "load_state_dict" in uses:
                loads.add(key)
    return [(path, text, (path, text) in loads) for (path, text), ok in sorted(proven.items()) if ok]


def build_plan(
    summaries: Iterable[ModuleSummary],
    roots: Sequence[str],
    others: Sequence[Tuple[str, str, bytes]] = (),
    apex_free: Optional[Dict[str, bytes]] = None,
    glued: bool = True,
    edit_holders: bool = True,
    sources: Optional[Dict[str, bytes]] = None,
) -> RepoPlan:
    """The plan for the indexed files; ``others`` are the walked files the index left out
    (no apex in them), searched only for callers of the definitions that need the scaler;
    ``apex_free`` are indexed files the rules will not change (no apex.amp in them), by
    path, with their bytes; ``glued``: a launcher without apex.amp may hand a model
    factory's GradScaler on (``glue_plan``; the float16 target, where there is one);
    ``edit_holders``: the holder route may edit a file without apex (``holder_plan``; its
    autocast is float16's); ``sources``: every indexed file's bytes, by path (the runner-hook
    route reads them)."""
    by_path = {s.path: s for s in summaries}
    unindexed = {path: (shown, source) for path, shown, source in others}
    resolver = ModuleResolver(list(by_path) + list(unindexed), roots)
    definitions = _Definitions(by_path, unindexed, resolver)
    by_path = definitions.by_path
    launchers = {p for p, s in by_path.items() if s.training_inits and s.initializes_once()}
    plan = RepoPlan()

    # calls between files: (caller file, caller def) -> [(callee def, call text)]
    edges: Dict[Def, List[Tuple[Def, str]]] = {}
    callers: Dict[Def, List[Tuple[Def, int]]] = {}
    #: calls through a module name several files answer to: callee -> why no GradScaler follows one
    blind_calls: Dict[Def, str] = {}
    for path, summary in by_path.items():
        for call in summary.calls:
            callee = definitions.find(call.module, call.name, path)
            if callee is None:
                _note_blind_call(path, summary, call, definitions, blind_calls)
            if callee is None or callee[0] == path:
                continue
            edges.setdefault((path, call.owner), []).append((callee, call.text))
            callers.setdefault(callee, []).append(((path, call.owner), call.line))

    # a launcher initializing in several functions: each makes its own GradScaler, where every
    # call of the file that reaches a loss scaling is made by one of them
    several = several_launchers(by_path) - launchers
    several_why: Dict[str, str] = {}
    if several:
        probe = _needy(by_path, launchers | several, callers)
        for path in sorted(several):
            stray = stray_calls(path, by_path[path], edges, probe)
            if stray:
                caller, callee = stray[0]
                where = "its module level" if caller == MODULE_LEVEL else f"its {caller}()"
                several_why[path] = f"{where} calls {callee}() without initializing amp itself"
        # only where it hands a GradScaler on (one whose repository scales nothing stays as it was)
        handing = {p for (p, _def), called in edges.items() for callee, _t in called if callee in probe}
        launchers |= (several & handing) - set(several_why)

    # a model factory returns what its initializes made to each of its callers in other
    # files: each caller holds its own GradScaler from then on, as a launcher would
    factories, factory_refusals, caller_edits, glues = _factory_routes(
        by_path, launchers, callers, edges, others, definitions, apex_free or {}, glued
    )
    #: helpers handed the GradScaler by a launcher without apex.amp: planned entries no
    #: indexed file calls
    glued_helpers = {h: fp for fp, route in glues.items() if isinstance(route, GlueRoute) for h in route.helpers}
    glue_notes = _glue_refusals(glues, by_path)
    for factory_path, (_factory, receivers) in factories.items():
        launchers |= {factory_path} | {receiver[0] for receiver, _text in receivers}

    # definitions that need the scaler, from the sites upwards through their callers (a glue
    # launcher's own definitions hand it on by the edits of ``glue_calls``)
    glue_files = {route.path for route in glues.values() if isinstance(route, GlueRoute)}
    needy = {d for d in _needy(by_path, launchers, callers) if d[0] not in glue_files}

    # framework hooks and runners (mmcv) get it from the runner the launcher builds
    riding = framework_route(
        by_path, launchers, needy, others, {d: f"{by_path[c[0][0][0]].shown}:{c[0][1]}" for d, c in callers.items()}
    )

    # which needy definitions the scaler can reach: those whose every caller, in this file
    # and in others, is in a launcher or is reached itself (a least fixed point: a definition
    # nobody calls, or one only called in a cycle, is not reached)
    def local_callers(item: Def) -> List[Def]:
        return [(item[0], o) for o, called in by_path[item[0]].local_calls.items() if item[1] in called]

    # a class only built by the launcher (``(A if c else B)(...)``) gets it on the object built
    built = built_route(by_path, launchers, {d for d in needy - set(riding.carried) if d not in callers}, others,
                        definitions)
    riding.carried.update(built.carried)
    # a class that scales through the optimizers an object of the launcher holds reads the
    # GradScaler there; only one no call from a launcher or from code that needs the scaler
    # reaches (those get it by the call routes below)
    from_launchers: Set[Def] = set()
    grew = True
    while grew:
        grew = False
        for item in needy - from_launchers:
            every = [c for c, _ in callers.get(item, [])] + local_callers(item)
            if any(c[0] in launchers or c in from_launchers for c in every):
                from_launchers.add(item)
                grew = True
    unreachable = {d for d in needy - set(riding.carried) - from_launchers if not local_callers(d)}
    holding = held_route(by_path, launchers, unreachable, others)
    riding.carried.update(holding.carried)
    for path, by_name in holding.notes.items():
        riding.notes.setdefault(path, {}).update(by_name)

    reached: Set[Def] = set(riding.carried)
    grew = True
    while grew:
        grew = False
        for item in needy - reached:
            every = [c for c, _ in callers.get(item, [])] + local_callers(item)
            if every and all(c[0] in launchers or c in reached for c in every):
                reached.add(item)
                grew = True

    # a needy definition called from another file must be reached on every path, and used
    # only by calls
    entries: Dict[Def, List[Tuple[Def, int]]] = {
        d: callers[d] for d in needy if d in callers and d not in riding.carried and d not in glued_helpers
    }
    # a checkpoint function also called from scripts that run alone takes it as ``scaler=None``
    method_routes: Dict[Def, object] = {}
    #: a class -> the classes whose methods of the same name its route leaves to their own
    #: method routes (``peers``): it holds only while they hold
    relied_on: Dict[Def, Dict[Def, str]] = {}

    def method_route(item: Def):
        """``_method_route`` of a class built before the GradScaler (read once)."""
        if item not in method_routes:
            relied_on[item] = {}
            method_routes[item] = _method_route(item, by_path, launchers, others, definitions, optional_methods(item),
                                                frozenset(peers - {item}), relied_on[item])
        return method_routes[item]

    around_launchers: List[_AroundLaunchers] = []

    def optional_methods(item: Def) -> Optional[Callable[[str], Optional[str]]]:
        """Why a file calling the methods of ``item`` does not run alone (``runs_alone``);
        None when those methods do more than save or load the amp state."""
        methods = {s.method for s in by_path[item[0]].amp_sites if s.owner == item[1]}
        if not methods_save_or_load_only(item, methods, by_path, edges, needy):
            return None
        if not around_launchers:
            around_launchers.append(_AroundLaunchers(by_path, others))  # read once for all classes
        importers = around_launchers[0].files_importing

        def alone(other: str, owner: str) -> Optional[str]:
            why = runs_alone(other, definitions, importers)
            if why is None or owner == MODULE_LEVEL or sources is None:
                return why
            # the calling definition, one run at a time (``if render: ... else: train()``)
            return None if runs_apart((other, owner), definitions, importers, sources) is None else why

        return alone

    #: such classes also built elsewhere whose methods cannot take it -> why not
    not_taken: Dict[Def, str] = {}

    def taken_by_methods(item: Def, calls: List[Tuple[Def, int]]) -> bool:
        """The class ``item``, built in launchers before their amp.initialize, takes the
        GradScaler through methods that only save or load the amp state, and is also built
        elsewhere: a building alone hands nothing on (every call of those methods is proven
        by ``_method_route``: in a launcher, or in a file that runs alone, which passes
        nothing, as before)."""
        if item[1] not in by_path[item[0]].classes:
            return False
        inside = [c for c in calls if c[0][0] in launchers]
        outside = [c for c in calls if c[0][0] not in launchers]
        if not inside or not _built_before_the_scaler(item, inside, by_path) or optional_methods(item) is None:
            return False
        route = method_route(item)
        if isinstance(route, str):
            if outside:
                not_taken[item] = route  # the same words whether or not the other builders are indexed
            return False
        return bool(route[2] or outside)

    # a class built only as subclasses of other files (NeRF, built as MipNeRF or RefNeRF)
    # whose methods only save or load the amp state: their constructions are its own
    built_heirs = _built_as_subclasses(
        needy - set(callers) - set(riding.carried), by_path, definitions, others, local_callers,
        lambda item: optional_methods(item) is not None,
    )
    entries.update(built_heirs)
    heir_homes = {
        item: {p for p, _c in derived_classes(item, by_path, definitions)} - {item[0]} for item in built_heirs
    }
    #: classes whose methods may take the GradScaler: a call of a method of the same name on
    #: one of the others is that one's to pass it
    peers = {item for item in entries if item[1] in by_path[item[0]].classes and optional_methods(item) is not None}
    optional = _optional_entries(entries, local_callers, reached, launchers, needy, edges, by_path, definitions, others)
    #: classes built before the GradScaler whose methods take it as ``scaler=None``
    by_methods = {item for item, calls in sorted(entries.items()) if taken_by_methods(item, calls)}
    dropped = True
    while dropped:  # a route leaving calls to another class's route holds only with it
        dropped = False
        for item in sorted(by_methods):
            lost = sorted(set(relied_on.get(item, {})) - by_methods)
            if lost:
                by_methods.discard(item)
                not_taken[item] = relied_on[item][lost[0]]  # the call that peer's route would have served
                dropped = True
    for item in sorted(set(built_heirs) - by_methods):
        redefined = _redefining_heir(item, _scaler_methods(by_path[item[0]], item[1]), by_path, definitions)
        if redefined:
            # refused here, so the launchers building the subclasses keep apex.amp with it
            not_taken[item] = redefined
        else:
            # no method route: the routes of a class built only as its subclasses (a base class
            # reading what they keep on self, ``init_base_plan``) decide, as before
            del entries[item]
    if optional or by_methods:
        needy = {d for d in _needy(by_path, launchers, callers, optional, reached, by_methods) if d[0] not in glue_files}
        entries = {
            d: [c for c in calls if c[0][0] in launchers or (d in optional and c[0] in reached)
                or d not in optional | by_methods]
            for d, calls in entries.items()
            if d in needy
        }
    refused: Set[Def] = set()
    #: base classes whose methods read the GradScaler their subclasses keep (``base_plan``)
    lent: Dict[Def, Set[Def]] = {}
    for item, calls in entries.items():
        path, name = item
        # a class its methods would take the GradScaler into, built too where it is not
        # alone: the file that stands in the way, whichever call is met first
        reason = not_taken.get(item)
        every = calls + [(c, 0) for c in local_callers(item)]
        for caller, line in every if reason is None else ():
            if item in optional or item in by_methods:
                break  # its callers without a GradScaler call it as before
            if caller[0] not in launchers and caller not in reached:
                where = f"{by_path[caller[0]].shown}:{line}" if line else by_path[caller[0]].shown
                # "also" only where some call of it has the GradScaler
                if any(c[0] in launchers or c in reached for c, _line in every):
                    where = in_definition(by_path[caller[0]].shown, caller[1], by_path[caller[0]])
                    reason = f"{name} is also called from {where}, where no GradScaler exists"
                    break
                outside = [o for o in _callers_elsewhere(name, path, others, definitions) if o[2]]
                if outside:
                    reason = (f"{name} is called from {where} ({caller[1]}), and from files without apex.amp "
                              f"({_calls_shown(outside)}), none of which has a GradScaler")
                else:
                    reason = f"{name} is called only from {where} ({caller[1]}), where no GradScaler exists"
                reason += _no_launcher_why(by_path[caller[0]], several_why)
                break
        # ``super(Class, self)`` in its own body hands the class to nobody
        own = by_path[path]
        if reason is None and name not in own.super_only and handed_away(own, name, own, name):
            reason = f"{name} is used other than by calls in {by_path[path].shown}, so its callers cannot be followed"
        if reason is None:
            for other_path, other in by_path.items():
                if item in built_heirs and other_path in heir_homes[item]:
                    continue  # the file of a subclass it is built as: it names it as its base
                for local, (module, attr) in other.imports.items():
                    if (
                        attr == name
                        and handed_away(other, local, by_path[path], name)
                        and definitions.find(module, attr, other_path) == item
                    ):
                        reason = f"{name} is passed on as a value in {other.shown}, so its callers cannot be followed"
                for local, dotted in module_locals(other, definitions, other_path).items():
                    if read_as_value(other, local, name) and definitions.find(dotted, name, other_path) == item:
                        reason = (f"{name} is read as {local}.{name} in {other.shown} and passed on as a value, so "
                                  "its callers cannot be followed")
        if reason is None and item not in optional and item not in built_heirs:
            outside = _callers_elsewhere(name, path, others, definitions)
            if outside and not outside[0][2]:
                reason = f"{name} is also subclassed, passed on or stored in {outside[0][1]}, where no GradScaler exists"
            elif outside and _built_before_the_scaler(item, calls, by_path):
                # built before the GradScaler: its methods would take it, wherever it is built
                route = method_route(item)
                reason = route if isinstance(route, str) else None
            elif outside:
                other_path, shown, _line, owner = outside[0]
                where = in_definition(shown, owner, definitions.summary(other_path))
                reason = f"{name} is also called from {where}, where no GradScaler exists"
        unreached = needy - set(entries) - set(riding.carried)
        while reason is None:
            base = _needy_base(item, by_path, definitions, unreached)
            if base is None:
                break
            why = lendable_base(base, by_path, lambda d: bool(callers.get(d) or local_callers(d)),
                                lambda n, p: _callers_elsewhere(n, p, others, definitions), definitions)
            if why is not None:
                reason = (f"{name} derives from {base[1]} in {by_path[base[0]].shown}, whose methods use amp "
                          f"where the GradScaler cannot reach them ({why})")
            else:
                lent.setdefault(base, set()).add(item)  # it reads the GradScaler the subclasses keep
                unreached = unreached - {base}
        if reason is not None:
            plan.unplanned[item] = reason
            refused.add(item)
    for item in sorted(needy & set(blind_calls)):
        if item not in refused:
            plan.unplanned[item] = blind_calls[item]
            refused.add(item)
    # a refusal spreads to everything that would pass the scaler through it, and to the
    # subclasses of a base that reads it on self when one of them does not get it
    changed = True
    while changed:
        changed = False
        for item in list(entries):
            if item in refused:
                continue
            if any(callee in refused for callee, _ in edges.get(item, [])):
                refused.add(item)
                changed = True
        family = lambda b: derived_classes(b, by_path, definitions)  # noqa: E731
        for item, reason in check_heirs(lent, family, set(entries), refused, by_path).items():
            plan.unplanned[item] = reason
            refused.add(item)
            changed = True
    lent = {b: h for b, h in lent.items() if not h & refused}
    notes: Dict[str, Dict[str, str]] = {}
    #: launchers whose amp instance reaches a definition that keeps apex.amp: they keep it too
    held: Dict[str, str] = {}
    # a launcher reached by several refused definitions names one: the first that is refused
    # for a reason of its own rather than for passing the GradScaler on, in file order (not the
    # set's, which changes from run to run; and a second run, where a file the first one made
    # native no longer needs it, words it the same)
    for item in sorted(refused, key=lambda d: (d not in plan.unplanned, d)):
        path, name = item
        reason = plan.unplanned.get(item)
        if reason is None:
            blocked = next(callee for callee, _ in edges.get(item, []) if callee in refused)
            reason = f"it passes the GradScaler on to {blocked[1]} in {by_path[blocked[0]].shown}, which cannot get it"
        plan.unplanned[item] = reason
        notes.setdefault(path, {})[name] = reason
        scales = any(s.owner == name and s.member == "scale_loss" for s in by_path[path].amp_sites)
        for (caller_path, _def), _line in entries.get(item, ()):
            if caller_path in launchers and caller_path not in held:
                notes.setdefault(caller_path, {})[MODULE_LEVEL] = held[caller_path] = (
                    f"{'the losses are scaled' if scales else 'the amp state is saved or loaded'} in "
                    f"{by_path[path].shown} ({name}), which cannot get the GradScaler: {reason}"
                )
    for path, by_name in riding.notes.items():
        notes.setdefault(path, {}).update(by_name)
    planned = {d: c for d, c in entries.items() if d not in refused}
    planned.update({h: [] for h in glued_helpers})
    # a definition no file refers to, beside planned entries of its file, a training function
    # that scales its losses or a checkpoint function that saves or loads the amp state, takes
    # the GradScaler as a required parameter: no call in the repository needs it, and a call
    # from outside that does not pass it fails at once
    orphans = needy - set(callers) - set(riding.carried) - {(p, k) for p, n in riding.notes.items() for k in n}
    kept, kept_why = _self_kept_bases(
        needy - set(callers) - set(riding.carried) - set(lent) - refused, by_path, definitions, launchers, callers,
        local_callers, others, held,
    )
    orphans -= set(lent) | set(glued_helpers) | refused | set(kept)
    unreferenced = unreferenced_definitions(
        {
            d
            for d in orphans
            if not local_callers(d)
            and (d[0] in {p for p, _n in planned} or _scaling_function(by_path[d[0]], d[1])
                 or _state_function(by_path[d[0]], d[1]))
            # a model factory of another file initializes for it: its scaler comes from there
            and not any(by_path[callee[0]].training_inits for callee, _text in edges.get(d, []))
            # built by name from a module imported at run time: a call no new parameter reaches
            and not _runtime_note(d[0], d[1], by_path, others, definitions)
        },
        by_path,
        definitions,
    )
    _note_unreachable(orphans - unreferenced, callers, local_callers, by_path, launchers, notes, others, definitions,
                      edges, kept_why)
    for path, by_name in glue_notes.items():
        notes.setdefault(path, {}).update(by_name)  # the glue route says why, more exactly
    _note_unbuilt(built, by_path, launchers, notes)
    for launcher in sorted(launchers):
        if not any(s.member == "scale_loss" for s in by_path[launcher].amp_sites):
            note = unbound_scale_note(launcher, by_path, edges) or ambiguous_import_note(
                launcher, by_path, definitions, needy
            )
            if note is not None:
                # what the launcher's own call says comes first: a note of _note_unreachable is
                # written only while the launcher is the repository's one, which a sibling
                # launcher migrated by a first run makes it on a second
                notes.setdefault(launcher, {})[SCALED_ELSEWHERE] = note
    for path, summary in sorted(by_path.items()):
        why = _no_launcher_why(summary, several_why)
        if path not in launchers and why and not any(s.member == "scale_loss" for s in summary.amp_sites):
            notes.setdefault(path, {}).setdefault(SCALED_ELSEWHERE, "no amp.scale_loss in this file" + why)
    for path, note in module_level_note(riding, launchers, by_path).items():
        # a runner carrying the GradScaler would not reach losses scaled outside the
        # framework's classes: where those are, and why they are not reached, comes first
        notes.setdefault(path, {}).setdefault(MODULE_LEVEL, notes[path].get(SCALED_ELSEWHERE, note))
    # a class built before the GradScaler exists: its methods that scale take it instead
    method_entries: Dict[str, List[Tuple[str, str]]] = {}
    method_calls: Dict[Def, List[Tuple[str, str]]] = {}
    #: those of ``method_entries`` also called from files that run alone: ``scaler=None``
    optional_method_entries: Dict[str, List[Tuple[str, str]]] = {}
    #: a class built before the initialize -> (launcher, its definition, the instance's name)
    attach_of: Dict[Def, Tuple[str, str, str]] = {}
    for item, calls in list(planned.items()):
        if not _built_before_the_scaler(item, calls, by_path):
            continue
        route = method_route(item)
        if isinstance(route, str):
            heirs = derived_classes(item, by_path, definitions)
            attached = attach_route(item, calls, by_path, launchers, definitions, heirs)
            if not isinstance(attached, str):
                attach_of[item] = attached  # the launcher puts it on the instance; no call passes it
                method_calls[item] = []
            continue  # else the constructor route stays; the launcher reports why it cannot be
        methods, passing, optional_route = route
        method_entries.setdefault(item[0], []).extend((item[1], m) for m in methods)
        if optional_route:
            optional_method_entries.setdefault(item[0], []).extend((item[1], m) for m in methods)
        method_calls[item] = passing
    links = _amp_links(by_path, launchers, definitions)
    holders = _amp_holders(by_path, launchers, definitions, {(c, t) for c, t, _d, _p, _r in links})
    _refuse_factories(plan, notes, factory_refusals)
    if (not planned and not links and not holders and not riding.carried and not factories and not unreferenced
            and not kept):
        plan.add_notes(notes)
        _hold(plan, held)
        return _last_routes(plan, by_path, launchers, definitions, unindexed, others, apex_free, edit_holders,
                        sources)

    # components: files joined by planned calls
    parent: Dict[str, str] = {}

    def find(p: str) -> str:
        while parent.setdefault(p, p) != p:
            p = parent[p]
        return p

    for (callee_path, _name), calls in planned.items():
        for (caller_path, _def), _line in calls:
            parent[find(caller_path)] = find(callee_path)
    for caller_path, _text, (callee_path, _name), _param, _reads in links:
        parent[find(caller_path)] = find(callee_path)
    for caller_path, _text, _loads in holders:
        find(caller_path)  # the consumer is left as it is: the launcher alone, or with its own
    for unreferenced_path, _name in unreferenced:
        find(unreferenced_path)  # alone, or with the planned entries of its file
    for launcher in riding.attach:
        for carried_path, _name in riding.carried:
            if (carried_path, _name) not in built.built_in:
                parent[find(carried_path)] = find(launcher)
    for (carried_path, _name), launcher in built.built_in.items():
        parent[find(carried_path)] = find(launcher)
    for (carried_path, _name), launcher in holding.joined.items():
        parent[find(carried_path)] = find(launcher)
    for factory_path, (_factory, receivers) in factories.items():
        for receiver, _text in receivers:
            parent[find(receiver[0])] = find(factory_path)
    for (helper_path, _name), factory_path in glued_helpers.items():
        parent[find(helper_path)] = find(factory_path)
    for (base_path, _name), heirs in lent.items():
        for heir_path, _heir in heirs:
            parent[find(base_path)] = find(heir_path)
    for (base_path, _name), (heir_path, _heir) in kept.items():
        parent[find(base_path)] = find(heir_path)
    roots_of = sorted({find(p) for p in parent})
    component = {p: roots_of.index(find(p)) for p in parent}

    losses: Dict[int, int] = {}
    for number in set(component.values()):
        members = [p for p in component if component[p] == number and p in launchers]
        counts = {s.num_losses for p in members for s in by_path[p].training_inits}
        losses[number] = counts.pop() if len(counts) == 1 else 1
    names: Dict[str, str] = {}
    # a class the launcher puts the GradScaler on keeps it as an attribute of its instances:
    # one no file of its class family reads or sets (its own included)
    attached = {p: family_attribute_names([(p, c) for q, c in attach_of if q == p], by_path, definitions)
                for p, _c in attach_of}
    for callee_path in (
        [d[0] for d in planned] + [d[0] for d in unreferenced] + [r[0] for _f, rs in factories.values() for r, _t in rs]
    ):
        used = by_path[callee_path].identifiers | attached.get(callee_path, set())
        choices = SCALERS_PARAM_NAMES if losses[component[callee_path]] > 1 else SCALER_PARAM_NAMES
        names[callee_path] = next((n for n in choices if n not in used), "apexcompat_" + choices[-1])
    lent_access: Dict[str, List[Tuple[str, str, str]]] = {}
    for base, heirs in sorted(lent.items()):
        # one attribute for the base and every subclass that keeps the GradScaler on self
        group = sorted({base[0]} | {p for p, _n in heirs})
        used = set().union(*(by_path[p].identifiers for p in group)) | family_attribute_names([base], by_path,
                                                                                              definitions)
        choices = SCALERS_PARAM_NAMES if losses[component[base[0]]] > 1 else SCALER_PARAM_NAMES
        shared = next((n for n in choices if n not in used), "apexcompat_" + choices[-1])
        for member in group:
            names[member] = shared
        lent_access.setdefault(base[0], []).extend(carried_methods(base, by_path[base[0]], shared))
    attach_scaler: Dict[str, List[Tuple[str, str, str]]] = {}
    kept_for: Dict[str, List[Tuple[str, str, str]]] = {}
    for base, heir in sorted(kept.items()):
        # the launcher's class keeps its GradScaler on self where it creates it (``init_base_plan``)
        choices = SCALERS_PARAM_NAMES if losses[component[base[0]]] > 1 else SCALER_PARAM_NAMES
        attribute = names[base[0]] = kept_name(base, heir, by_path, definitions, choices)
        lent_access.setdefault(base[0], []).extend(carried_methods(base, by_path[base[0]], attribute))
        attach_scaler.setdefault(heir[0], []).append((heir[1], "self", attribute))
        kept_for.setdefault(heir[0], []).append((heir[1], attribute, f"{base[1]} in {by_path[base[0]].shown}"))
    own_forward: Dict[str, List[Tuple[str, str]]] = {}
    for item, (launcher, definition, instance) in sorted(attach_of.items()):
        methods = carried_methods(item, by_path[item[0]], names[item[0]])
        lent_access.setdefault(item[0], []).extend(methods)
        own_forward.setdefault(item[0], []).extend((c, m) for c, m, _a in methods)
        attach_scaler.setdefault(launcher, []).append((definition, instance, names[item[0]]))
    for launcher, attached in holding.attach.items():
        attach_scaler.setdefault(launcher, []).append(attached)
    for (held_path, name), methods in holding.carried.items():
        own_forward.setdefault(held_path, []).extend((name, m) for m, _a in methods)
    entries_of: Dict[str, List[str]] = {}
    pass_of: Dict[str, Dict[str, str]] = {}
    for (callee_path, name), calls in planned.items():
        if (callee_path, name) in method_calls:
            for caller_path, text in method_calls[(callee_path, name)]:
                pass_of.setdefault(caller_path, {})[text] = names[callee_path]
            continue
        entries_of.setdefault(callee_path, []).append(name)
        for (caller_path, caller_def), _line in calls:
            for callee, text in edges.get((caller_path, caller_def), []):
                if callee == (callee_path, name):
                    pass_of.setdefault(caller_path, {})[text] = names[callee_path]
    for callee_path, name in unreferenced:
        entries_of.setdefault(callee_path, []).append(name)
    # a loss-scaler class called as ``loss_scaler(loss, optimizer)`` from a launcher that has a
    # no-op autocast variable: the launcher's forward passes get the autocast, not the class
    from_caller: Dict[str, Set[str]] = {}
    for_calls: Dict[str, Set[str]] = {}
    for (callee_path, name), calls in planned.items():
        if name not in by_path[callee_path].called_wrappers():
            continue
        launching = [c for c in calls if c[0][0] in launchers and by_path[c[0][0]].noop_contexts]
        if len(launching) != len(calls):
            continue
        from_caller.setdefault(callee_path, set()).add(name)
        for (caller_path, caller_def), _line in calls:
            for callee, text in edges.get((caller_path, caller_def), []):
                if callee == (callee_path, name):
                    for_calls.setdefault(caller_path, set()).add(text)
    # a class whose method scales a loss its caller hands over (DLE-GNMT's AMPOptimizer.step),
    # built only in launchers: the launchers place the autocast
    at_caller: Dict[str, Set[str]] = {}
    loss_methods: Dict[str, Set[Tuple[str, str, int, str]]] = {}
    for (callee_path, name), calls in planned.items():
        summary = by_path[callee_path]
        if name not in summary.classes or name in from_caller.get(callee_path, set()):
            continue
        if not calls or any(c[0][0] not in launchers for c in calls):
            continue
        for site in summary.amp_sites:
            if site.member != "scale_loss" or site.owner != name or site.loss_param < 1:
                continue
            if site.method in ("", "__call__", "__init__") or (name, site.method) in summary.self_calls:
                continue  # a method the class calls itself: its own file places the autocast
            at_caller.setdefault(callee_path, set()).add(f"{name}.{site.method}")
            for (caller_path, caller_def), _line in calls:
                for callee, text in edges.get((caller_path, caller_def), []):
                    if callee == (callee_path, name):
                        loss_methods.setdefault(caller_path, set()).add(
                            (text, site.method, site.loss_param - 1, site.loss_name)
                        )
    # the glue route's helpers: their launcher without apex.amp wraps the forward passes
    glued_names: Dict[str, Set[str]] = {}
    glued_from: Dict[str, str] = {}
    glued_ids: Dict[str, Set[Tuple[str, str]]] = {}
    for (helper_path, name), factory_path in glued_helpers.items():
        glued_names.setdefault(helper_path, set()).add(name)
        glued_from[helper_path] = glues[factory_path].shown
        glued_ids.setdefault(helper_path, set()).update(glues[factory_path].loss_ids)
    # backward helpers whose callers in launchers step after each call (``caller_step_plan``)
    stepped_helpers, stepped_calls = caller_stepped(planned, by_path, launchers, edges)
    inits_of: Dict[int, List[bool]] = {}
    for p in launchers:
        if p in component:
            inits_of.setdefault(component[p], []).extend(site.dynamic for site in by_path[p].training_inits)
    dynamic = {c: bool(inits_of.get(c)) and all(inits_of[c]) for c in set(component.values())}
    for path in component:
        plan.files[path] = FilePlan(
            component=component[path],
            scaler_name=names.get(path, ""),
            entries=tuple(sorted(entries_of.get(path, []))),
            unreferenced=tuple(sorted(n for p, n in unreferenced if p == path)),
            optional_entries=tuple(sorted(n for p, n in optional if p == path)),
            pass_to=tuple(sorted(pass_of.get(path, {}).items())),
            autocast_from_caller=tuple(sorted(from_caller.get(path, ()))),
            autocast_for_calls=tuple(sorted(for_calls.get(path, ()))),
            dynamic_scaler=dynamic[component[path]],
            autocast_at_caller=tuple(sorted(at_caller.get(path, set()) | glued_names.get(path, set()))),
            glued_from=glued_from.get(path, ""),
            stepped_at_callers=tuple(sorted(stepped_helpers.get(path, {}).items())),
            stepped_calls=tuple(sorted(stepped_calls.get(path, ()))),
            glued_loss_ids=tuple(sorted(glued_ids.get(path, ()))),
            loss_methods=tuple(sorted(loss_methods.get(path, ()))),
            method_entries=tuple(sorted(method_entries.get(path, ()))),
            optional_methods=tuple(sorted(optional_method_entries.get(path, ()))),
            amp_arguments=tuple(
                sorted({t for c, t, _d, _p, _r in links if c == path} | {t for c, t, _l in holders if c == path})
            ),
            amp_holders=tuple(sorted({text for caller, text, loads in holders if caller == path and loads})),
            amp_parameters=tuple(sorted({(d[1], param) for _c, _t, d, param, _r in links if d[0] == path})),
            amp_gradients=tuple(sorted({text for caller, text, _d, _p, reads in links if caller == path and reads})),
            loss_scalers=losses[component[path]],
            carried=tuple(sorted(
                [(n, m, a) for (p, n), ms in riding.carried.items() if p == path for m, a in ms]
                + lent_access.get(path, [])
            )),
            runner_builds=riding.attach.get(path, ()),
            object_builds=built.attach.get(path, ()),
            built_methods=tuple(sorted((n, m) for (p, n), ms in built.carried.items() if p == path for m, _a in ms)),
            attach_scaler=tuple(attach_scaler.get(path, ())),
            kept_for_bases=tuple(kept_for.get(path, ())),
            attached_methods=tuple(own_forward.get(path, ())),
            held_methods=tuple(sorted((n, m) for (p, n), ms in holding.carried.items() if p == path for m, _a in ms)),
            held_delegates=holding.delegates.get(path, ()),
            held_readers=tuple(
                f"{n}.{m}() of {by_path[p].shown}"
                for (p, n), launcher in sorted(holding.joined.items()) if launcher == path
                for m, _a in holding.carried[(p, n)]
            ),
            framework_autocast=riding.autocast.get(path, ""),
            returns_scaler=factories[path][0] if path in factories else "",
            returned_to=(glues[path].shown if path in glues else _shown_receivers(by_path, factories[path][1]))
            if path in factories else "",
            received=tuple(sorted((r[1], t) for _f, rs in factories.values() for r, t in rs if r[0] == path)),
        )
    add_processor_routes(plan, by_path, launchers, callers)
    for factory_path, edits in caller_edits.items():
        for edit in edits:
            plan.caller_edits.setdefault(edit.path, []).append((component[factory_path], edit))
    plan.add_notes(notes)
    _hold(plan, held)
    return _last_routes(plan, by_path, launchers, definitions, unindexed, others, apex_free, edit_holders,
                        sources)


def _last_routes(
    plan: RepoPlan, by_path, launchers, definitions, unindexed, others, apex_free, edit_holders: bool, sources=None
) -> RepoPlan:
    """What every plan gets last, in order: the carrier facts, the launchers that scale
    nothing, the heir routes, the step-heir and bound-backward routes, the notes on clips
    after each scaled backward called per chunk, ``_finished``, the holder routes (the
    routes that edit files without apex.amp only with ``edit_holders``: their autocast is
    float16's)."""
    _add_carrier_facts(plan, by_path, definitions)
    for path, names in gradient_readers(by_path, definitions).items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), gradient_readers=names)
    walked = dict(unindexed)
    walked.update({p: (by_path[p].shown, src) for p, src in (sources or apex_free or {}).items() if p in by_path})
    indexed = {p: src for p, src in (sources or {}).items() if p in by_path and p not in (apex_free or {})}
    gates, reexports = probe_gates(indexed, walked)
    for path, names in gates.items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), probe_gates=names)
    plan.reexport_edits.update(reexports)
    _mark_nothing_scaled(plan, by_path, launchers, others, definitions)
    plan = add_heir_routes(plan, by_path, launchers, definitions)
    if edit_holders:
        plan = add_step_heir_routes(plan, by_path, launchers, definitions, unindexed, apex_free or {})
        plan = add_bound_routes(plan, by_path, launchers, definitions, unindexed, apex_free or {})
        plan = add_runner_hook_routes(plan, by_path, launchers, definitions, walked)
        plan = add_override_step_routes(plan, by_path, launchers, definitions, unindexed, apex_free or {})
    files = dict(unindexed)
    files.update({p: (by_path[p].shown, src) for p, src in (apex_free or {}).items() if p in by_path})
    plan = add_clip_loop_notes(plan, by_path, files)
    plan = add_amp_value_routes(plan, by_path, launchers, definitions, unindexed, sources)
    plan = _finished(plan, by_path, unindexed, others, definitions)
    return add_holder_routes(plan, by_path, launchers, definitions, unindexed, apex_free or {}) if edit_holders else plan


def _finished(plan: RepoPlan, by_path: Dict[str, ModuleSummary], unindexed, others, definitions) -> RepoPlan:
    """The plan with what every route adds last: optimizer wrappers, outside users of the
    parameters handed apex.amp, methods reading master_params that other files call, the
    calls of the methods that scale a loss in a class with its own forward(), the file that
    may keep a module-level GradScaler."""
    plan = add_outside_users(_with_wrappers(plan, by_path, unindexed, definitions), by_path, unindexed, definitions)
    plan = with_steppable_wrappers(plan, by_path, unindexed, definitions)
    for path, helpers in helpers_called_elsewhere(by_path, others, definitions).items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), helpers_called_elsewhere=helpers)
    overridden = overridden_methods(by_path, definitions)
    for path, overrides in overridden.items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), overridden=overrides)
    for path, (alone, called) in self_called_only(by_path, others, definitions, overridden).items():
        plan.files[path] = replace(
            plan.files.get(path, FilePlan()), self_called_only=alone, scaling_called_elsewhere=called
        )
    for path, summary in by_path.items():
        factories = _parser_factories_called(path, summary, definitions)
        if factories:
            plan.files[path] = replace(plan.files.get(path, FilePlan()), parser_factories=factories)
    for path, summary in by_path.items():
        # a method of a class with a forward() of its own that scales a loss it may be handed
        methods = sorted({
            s.method
            for s in summary.amp_sites
            if s.member == "scale_loss" and s.method and "forward" in summary.class_members.get(s.owner, set())
        })
        if methods:
            calls = calls_in_repository(methods, by_path, unindexed, definitions)
            handed = tuple((m, tuple(calls[m])) for m in methods)
            plan.files[path] = replace(plan.files.get(path, FilePlan()), handed_calls=handed)
    route = module_scaler_route(by_path, _names_amp, definitions.resolver.resolve)
    if route is not None and by_path[route.home].main_guard and any(
        p != route.home for p in _AroundLaunchers(by_path, others).files_importing(route.home)
    ):
        route = None  # a script another file imports: run as __main__ it would have a variable of its own
    members = [route.home, *route.guests] if route is not None else []
    if route is not None and route.refusal:
        plan.files[route.home] = replace(plan.files.get(route.home, FilePlan()), module_refusal=route.refusal)
    elif route is not None and not any(p in plan.files and plan.files[p].component is not None for p in members):
        # the home and its guests: one component (a number no other component has)
        component = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
        joined = component if route.guests else None
        # the guests name the variable: the home takes that name then, else the one its rule picks
        named = route.variable if route.guests else plan.files.get(route.home, FilePlan()).scaler_name
        plan.files[route.home] = replace(
            plan.files.get(route.home, FilePlan()), module_scaler=True, scaler_name=named, component=joined
        )
        for path, dotted in route.guests.items():
            plan.files[path] = replace(
                plan.files.get(path, FilePlan()), module_home=dotted, scaler_name=route.variable, component=joined
            )
    if route is None:
        _add_reader_route(plan, by_path, definitions)
    _add_handed_calls(plan, by_path, unindexed, definitions)
    _drop_routes_through_unedited_files(plan, by_path)
    for path, known in list(plan.files.items()):
        if known.handed_calls and path in by_path:
            plan.files[path] = replace(known, stepping_methods=stepping_methods(path, by_path, definitions))
    for path, names in family_attributes(by_path, definitions).items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), family_attributes=names)
    for path, importers in amp_reexports(by_path, definitions).items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), amp_importers=importers)
    return plan


def _add_handed_calls(plan: RepoPlan, by_path: Dict[str, ModuleSummary], unindexed, definitions) -> None:
    """The calls in the repository of the other methods that scale a loss, for the files a
    route already plans: a method may compute its loss from what its callers hand it
    (APX253, ``rules/_amp_handed_outputs``).  A file no route plans gets no entry for them."""
    for path, known in list(plan.files.items()):
        summary = by_path.get(path)
        if summary is None:
            continue
        recorded = {method for method, _calls in known.handed_calls}
        methods = sorted({
            s.method for s in summary.amp_sites if s.member == "scale_loss" and s.method and s.owner
        } - recorded)
        if methods:
            calls = calls_in_repository(methods, by_path, unindexed, definitions)
            handed = known.handed_calls + tuple((m, tuple(calls[m])) for m in methods)
            plan.files[path] = replace(known, handed_calls=handed)


def _add_reader_route(plan: RepoPlan, by_path: Dict[str, ModuleSummary], definitions: "_Definitions") -> None:
    """The reader route (APX252), where no other route took any of its files: the home keeps
    the GradScaler(s) in a module-level variable, its readers read it through the module; one
    component."""

    resolver = definitions.resolver

    def imported(path: str) -> List[str]:
        summary = definitions.raw(path)
        lines = summary.import_lines if summary is not None else {}
        return imported_files(path, lines, resolver.resolve, resolver.files)

    route = reader_route(by_path, _names_amp, resolver.resolve, imported, resolver.files)
    if route is None:
        return
    members = [route.home, *route.readers]
    if any(p in plan.files and _routed(plan.files[p]) for p in members):
        return
    if route.refusal:
        plan.files[route.home] = replace(plan.files.get(route.home, FilePlan()), module_refusal=route.refusal)
        return
    component = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    common = dict(scaler_name=route.variable, component=component, loss_scalers=route.losses)
    readers = tuple(by_path[p].shown for p in route.readers)
    plan.files[route.home] = replace(
        plan.files.get(route.home, FilePlan()),
        module_scaler=True,
        module_readers=readers,
        losses_at_run_time=route.losses_at_run_time,
        **common,
    )
    for path, dotted in route.readers.items():
        local = path in route.local
        plan.files[path] = replace(
            plan.files.get(path, FilePlan()), module_reader=dotted, reader_local=local,
            reader_bound=route.bound.get(path, ""), **common,
        )


def _routed(fp: FilePlan) -> bool:
    """Whether another route already plans this file's GradScaler."""
    return (
        fp.component is not None
        or fp.takes_scaler
        or bool(fp.received or fp.returns_scaler or fp.attach_scaler or fp.pass_to or fp.module_home)
        or fp.module_scaler
        or fp.carrier is not None
    )


def _parser_factories_called(
    path: str, summary: ModuleSummary, definitions: "_Definitions"
) -> Tuple[Tuple[str, FlagDefaults], ...]:
    """(call text, flags) for the calls of ``path`` (a file that scales a loss) of a parser
    factory another walked file defines itself (a re-export is not followed)."""
    if not any(s.member == "scale_loss" for s in summary.amp_sites):
        return ()
    found = {}
    for call in summary.calls:
        target = definitions.resolver.resolve(call.module, path)
        if target is None or target == path:
            continue
        if target not in definitions.by_path and target not in definitions.naming("ArgumentParser"):
            continue  # read only the files that may hold one
        if definitions.find(call.module, call.name, path, anywhere=True) != (target, call.name):
            continue
        flags = definitions.summary(target).parser_factories.get(call.name)  # type: ignore[union-attr]
        if flags is not None:
            found[call.text] = flags
    return tuple(sorted(found.items()))


def _names_amp(summary: ModuleSummary) -> bool:
    """Whether the rules will find apex.amp in this file (they edit no file without it)."""
    if summary.amp_sites or summary.amp_values or summary.amp_arguments:
        return True
    # ``from apex import amp``, ``from apex.amp import ...``, ``import apex.amp``, the same of apexcompat
    return any(
        [*module.split(".")[:2], attr][:2] in (["apex", "amp"], ["apexcompat", "amp"])
        for module, attr in summary.imports.values()
    )


def _drop_routes_through_unedited_files(plan: RepoPlan, summaries: Dict[str, ModuleSummary]) -> None:
    """A component whose GradScaler would be handed through a file that names no apex.amp
    (it mentions apex in a comment, or imports only apex's DDP): no rule edits that file, so
    its definitions would not take the scaler their callers pass.  The component is
    migrated without the plan, each of its files told why."""
    from .pipeline import DROPPED  # (the pipeline says so for the components it drops itself)

    failed: Dict[int, str] = {}
    for path, fp in plan.files.items():
        summary = summaries.get(path)
        if fp.component is None or fp.component in failed or summary is None or _names_amp(summary):
            continue
        if fp.takes_scaler or fp.optional_entries or fp.pass_to or fp.received:
            names = ", ".join(sorted(fp.entries) or sorted(m for m, _ in fp.pass_to)) or "its definitions"
            failed[fp.component] = (
                f"in {summary.shown}, the GradScaler would be handed through {names}, but that file names "
                "no apex.amp and the tool does not edit it: pass the scaler there by hand"
            )
    for path, fp in list(plan.files.items()):
        if fp.component in failed:
            plan.files[path] = fp.dropped(DROPPED + failed[fp.component])


def _factory_routes(
    by_path: Dict[str, ModuleSummary],
    launchers: Set[str],
    callers: Dict[Def, List[Tuple[Def, int]]],
    edges: Dict[Def, List[Tuple[Def, str]]],
    others: Sequence[Tuple[str, str, bytes]],
    definitions: "_Definitions",
    apex_free: Dict[str, bytes],
    glued: bool = True,
) -> Tuple[
    Dict[str, Tuple[str, Tuple[Tuple[Def, str], ...]]],
    Dict[str, Tuple[str, str]],
    Dict[str, List[CallerEdit]],
    Dict[str, Union["GlueRoute", "GlueRefusal"]],
]:
    """Model factories: a file whose training initializes (one, alternatives, or several in
    sequence) are all in one top-level function that scales nothing itself, called only from
    top-level functions of other files with apex.amp that need the scaler (they scale a loss
    there), once from each, the factory used nowhere else (not passed on, not called from
    files without apex).  Several callers must be in separate files that call nothing of one
    another, so that each caller's GradScaler is the one apex's initialize of that call made
    for the losses it scales.  Each becomes factory file -> (factory, ((receiving definition,
    call text), ...)); each receiving file proves its call unpacks a tuple.

    A caller may also be the ``__init__`` of a class whose other methods scale (the receiving
    definition is then ``Class.__init__``): it keeps the GradScaler on ``self``
    (``_class_receiver``).  When such a class cannot be proven, the factory and every one of
    its callers stay as they are, and the second mapping says why: file -> (the calling
    definition, "" in the factory's file; the reason).

    Callers in files without apex.amp (walked, or indexed but left to no rule) get the
    minimal edit that keeps their calls working (``factory_callers``; the third mapping:
    factory file -> those edits); one whose shape cannot be proven refuses the factory.

    A factory called only from files without apex.amp may be joined to the helpers that
    scale the losses by one of them (``glue_plan``, where ``glued``): the fourth mapping,
    factory file -> that route, whose edit replaces the launcher's ``, _``, or why the
    launcher cannot hand it on (said at the factory's initialize and the helpers' sites)."""
    routes: Dict[str, Tuple[str, Tuple[Tuple[Def, str], ...]]] = {}
    refusals: Dict[str, Tuple[str, str]] = {}
    edits: Dict[str, List[CallerEdit]] = {}
    glues: Dict[str, Union[GlueRoute, GlueRefusal]] = {}
    for path, summary in by_path.items():
        inits = summary.training_inits
        owners = {s.owner for s in inits}
        if not inits or len(owners) != 1 or summary.owners_needing_scaler():
            continue
        if not (summary.initializes_once() or summary.initializes_in_sequence()):
            continue
        factory = owners.pop()
        if factory not in summary.functions:
            continue
        every_call = callers.get((path, factory), [])
        calls = [c for c in every_call if c[0][0] not in apex_free]
        if any(factory in called for called in summary.local_calls.values()):
            continue
        glue = None
        losses = max(s.num_losses for s in inits)
        if not calls and glued:
            # its caller is a file without apex.amp: it may hand the GradScaler on (``glue_plan``),
            # or their list, one per loss id, each call giving its loss id as a number
            names = SCALERS_PARAM_NAMES if losses > 1 else SCALER_PARAM_NAMES
            glue = glue_route(path, factory, by_path, callers, others, definitions, names, apex_free, losses)
        if isinstance(glue, GlueRefusal):
            glues[path] = glue
            continue
        if (glue is None and not calls) or (losses != 1 and glue is None):
            continue
        receiver_files = {receiver[0] for receiver, _line in calls}
        if len(receiver_files) != len(calls) or not all(
            _receives(by_path, launchers, receiver, line) for receiver, line in calls
        ):
            continue
        if any(
            callee[0] in receiver_files - {caller[0]}
            for caller, called in edges.items()
            if caller[0] in receiver_files
            for callee, _text in called
        ):
            continue  # one caller runs another: whose GradScaler scales what would be unproven
        if handed_away(summary, factory, summary, factory):
            continue
        if any(
            attr == factory and handed_away(other, local, summary, factory)
            for other in by_path.values()
            for local, (_module, attr) in other.imports.items()
        ):
            continue
        why = next(
            (w for receiver, _line in sorted(calls) if receiver[1] in by_path[receiver[0]].classes
             for w in [_class_receiver(by_path, receiver, definitions)] if w),
            "",
        )
        outside = _outside_edits(factory, path, every_call, apex_free, others, by_path, definitions)
        if isinstance(outside, str):
            why = why or outside
        if why:
            refusals[path] = ("", why)
            for receiver, _line in calls:
                refusals[receiver[0]] = (receiver[1], why)
            continue
        receivers = tuple(
            (
                (path_, f"{owner}.__init__" if owner in by_path[path_].classes else owner),
                next(c.text for c in by_path[path_].calls if c.owner == owner and c.line == line),
            )
            for (path_, owner), line in sorted(calls)
        )
        routes[path] = (factory, receivers)
        edits[path] = [e for e in outside if e.changes] if not isinstance(outside, str) else []
        if glue is not None:
            # the launcher's unpacking binds the GradScaler instead of taking it into ``_``
            edits[path] = [e for e in edits[path] if e.path != glue.path] + [glue]  # type: ignore[list-item]
            glues[path] = glue
    # two factories glued through one launcher would each bind and pass a GradScaler there
    shared = [p for p, g in glues.items() if isinstance(g, GlueRoute)
              and sum(1 for o in glues.values() if isinstance(o, GlueRoute) and o.path == g.path) > 1]
    for path in shared:
        route = glues[path]
        glues[path] = GlueRefusal(f"{route.shown} calls the model factories of several files",
                                  f"{route.shown} ({route.function})",
                                  route.helpers)
        routes.pop(path, None)
        edits.pop(path, None)
    return routes, refusals, edits, glues


def _glue_refusals(glues, by_path: Dict[str, ModuleSummary]) -> Dict[str, Dict[str, str]]:
    """The notes of the glue route's refusals (``glue_plan``): at the factory's initialize
    (the launcher's note) and at the helpers' definitions."""
    notes: Dict[str, Dict[str, str]] = {}
    for factory_path, refusal in glues.items():
        if not isinstance(refusal, GlueRefusal):
            continue
        names = ", ".join(f"{h[1]}() of {by_path[h[0]].shown}" for h in refusal.helpers)
        notes.setdefault(factory_path, {})[SCALED_ELSEWHERE] = (
            f"no amp.scale_loss in this file: the losses are scaled in {names}, called from {refusal.where}, a file "
            f"without apex.amp that calls this model factory too; it cannot hand the GradScaler on: {refusal.reason}"
        )
        for path, name in refusal.helpers:
            notes.setdefault(path, {})[name] = (
                f"{name} is called from {refusal.where}, a file without apex.amp that gets the model from "
                f"the factory in {by_path[factory_path].shown}, and it cannot hand the GradScaler on: {refusal.reason}"
            )
    return notes


def _outside_edits(
    factory: str,
    path: str,
    calls: List[Tuple[Def, int]],
    apex_free: Dict[str, bytes],
    others: Sequence[Tuple[str, str, bytes]],
    by_path: Dict[str, ModuleSummary],
    definitions: "_Definitions",
) -> Union[List[CallerEdit], str]:
    """The edits that keep the calls of the model factory ``factory`` (of ``path``) in files
    without apex.amp working once it returns the GradScaler too, or why one cannot be
    proven: indexed files the rules leave alone (``calls`` from them) and walked files the
    index left out."""
    found: Dict[str, Tuple[str, bytes, Set[int]]] = {}
    for (caller_path, _owner), line in calls:
        if caller_path in apex_free:
            found.setdefault(caller_path, (by_path[caller_path].shown, apex_free[caller_path], set()))[2].add(line)
    for other_path, shown, source in others:
        if factory.encode() not in source:
            continue
        summary = definitions.summary(other_path)
        if summary is None:
            continue
        for local, (module, attr) in summary.imports.items():
            if (
                attr == factory
                and definitions.find(module, attr, other_path) == (path, factory)
                and handed_away(summary, local, by_path[path], factory)
            ):
                return f"{factory}() is used other than by calls in {shown}, a file without apex.amp"
        if summary.star_imports and factory not in summary.functions | summary.classes:
            return f"{shown}, a file without apex.amp, imports names with `*`: its calls of {factory}() cannot be found"
        for call in summary.calls:
            if definitions.find(call.module, call.name, other_path) == (path, factory):
                found.setdefault(other_path, (shown, source, set()))[2].add(call.line)
    edits: List[CallerEdit] = []
    for caller_path, (shown, source, lines) in sorted(found.items()):
        summary = definitions.summary(caller_path)
        texts = {
            c.text
            for c in (summary.calls if summary is not None else [])
            if c.line in lines and definitions.find(c.module, c.name, caller_path) == (path, factory)
        }
        edit = caller_edit(factory, texts, sorted(lines), caller_path, shown, source)
        if isinstance(edit, str):
            return edit
        edits.append(edit)
    return edits


def _receives(by_path: Dict[str, ModuleSummary], launchers: Set[str], receiver: Def, line: int) -> bool:
    """Whether a caller of a model factory can hold the GradScaler it returns: a top-level
    function of a file with apex.amp, no launcher itself, that needs the scaler; the
    ``__init__`` of such a file's class whose methods need it; or the module level of such a
    file (a script training at its top level: the per-file rule proves the call is one of the
    module's own statements, before every use of the GradScaler)."""
    user = by_path[receiver[0]]
    needing = user.owners_needing_scaler()
    if receiver[0] in launchers or not needing:
        return False
    if receiver[1] == MODULE_LEVEL:
        return True
    if receiver[1] in user.functions:
        return True
    return receiver[1] in needing and receiver[1] in user.classes and any(
        c.owner == receiver[1] and c.line == line and c.method == "__init__" for c in user.calls
    )


def _class_receiver(by_path: Dict[str, ModuleSummary], receiver: Def, definitions: "_Definitions") -> str:
    """Why the class whose ``__init__`` calls a model factory cannot keep the GradScaler it
    returns on ``self`` for its methods that scale ("" when it can): each of them must be a
    plain method (run on an instance, so after ``__init__``), and no class of the walked
    files may derive from it with an ``__init__`` that skips the base's (its instances would
    lack the attribute) or with apex.amp sites of its own (not followed)."""
    path, cls = receiver
    summary = by_path[path]
    plain = summary.plain_methods.get(cls, set())
    for site in summary.amp_sites:
        if site.owner == cls and site.member in SCALER_MEMBERS and site.method not in plain:
            return (
                f"{cls}.{site.method or '<class body>'} in {summary.shown} uses apex.amp without an instance, "
                f"so it could run without the GradScaler {cls}.__init__ would keep on self"
            )
    family = derived_classes(receiver, by_path, definitions) - {receiver}
    for heir_path, heir in sorted(family):
        heir_summary = definitions.summary(heir_path) or ModuleSummary(heir_path, heir_path)
        if heir in heir_summary.unchained_inits:
            return (
                f"{heir} in {heir_summary.shown} derives from {cls} but its __init__ does not call the base's, so "
                f"its instances would lack the GradScaler {cls}.__init__ would keep on self"
            )
        if any(site.owner == heir for site in heir_summary.amp_sites):
            return (
                f"{heir} in {heir_summary.shown} derives from {cls} and uses apex.amp itself, which the GradScaler "
                f"{cls}.__init__ would keep on self does not follow"
            )
    return ""


def _hold(plan: RepoPlan, held: Dict[str, str]) -> None:
    """A launcher whose losses are scaled or whose amp state is kept by a definition of
    another file that cannot get the GradScaler keeps apex.amp too: one amp instance comes
    out native in every file or in none."""
    for path, reason in held.items():
        plan.files[path] = replace(plan.files.get(path, FilePlan()), refusal=reason)


def _refuse_factories(
    plan: RepoPlan, notes: Dict[str, Dict[str, str]], refusals: Dict[str, Tuple[str, str]]
) -> None:
    """A model factory whose callers cannot all keep the GradScaler: the factory's
    initialize keeps apex.amp with that reason, and each caller's sites say it."""
    for path, (caller, reason) in refusals.items():
        if not caller:
            plan.files[path] = replace(plan.files.get(path, FilePlan()), refusal=reason)
        else:
            notes.setdefault(path, {})[caller] = f"the model factory it calls keeps apex.amp: {reason}"


def _shown_receivers(by_path: Dict[str, ModuleSummary], receivers: Tuple[Tuple[Def, str], ...]) -> str:
    """The files of a factory's callers as the messages name them: ``a.py`` or ``a.py, b.py``."""
    return ", ".join(by_path[receiver[0]].shown for receiver, _text in receivers)


def _add_carrier_facts(plan: RepoPlan, by_path: Dict[str, ModuleSummary], definitions) -> None:
    """Tell each file that stores apex.amp on an attribute where else that object may be read;
    launchers that hand it to a function of another file that reads it form a component
    with that file (``carrier_plan.share_carriers``)."""
    facts = carrier_facts(by_path, definitions)
    planned = {p for p, f in plan.files.items() if f.component is not None}
    groups = share_carriers(by_path, definitions, facts, planned)
    first = 1 + max((f.component for f in plan.files.values() if f.component is not None), default=-1)
    component = {path: first + number for number, group in enumerate(groups) for path in group}
    dynamic = {}
    for number, group in enumerate(groups):
        inits = [site.dynamic for p in group for site in by_path[p].training_inits]
        dynamic[first + number] = bool(inits) and all(inits)
    for path, found in facts.items():
        current = plan.files.get(path, FilePlan())
        if path in component:
            current = replace(current, component=component[path], dynamic_scaler=dynamic[component[path]])
        plan.files[path] = replace(current, carrier=found)


def _mark_nothing_scaled(
    plan: RepoPlan,
    by_path: Dict[str, ModuleSummary],
    launchers: Set[str],
    others: Sequence[Tuple[str, str, bytes]],
    definitions: "_Definitions",
) -> None:
    """Tell the launchers of no component when apex scaled no loss of their initialize: when
    the code of no file of the repository (with apex or without) names ``scale_loss`` or a
    GradScaler, or else when what the launcher's code calls, followed through the repository,
    reaches no ``amp.scale_loss`` (``_may_reach_a_scaled_loss``).  The second is what makes a
    second run agree with the first: an evaluation script beside a training script that
    scales keeps neither answer only because the first run migrated the training script."""
    anywhere = any(s.scale_loss_named or _names_a_scaler(s) for s in by_path.values()) or any(
        names_scale_loss(src) or b"GradScaler" in src for _p, _s, src in others
    )
    around: Optional[_AroundLaunchers] = None
    for path in sorted(launchers | _inference_loaders(by_path)):
        current = plan.files.get(path, FilePlan())
        if current.component is not None:
            continue
        if not anywhere:
            plan.files[path] = replace(current, nothing_scaled=True)
            continue
        if any(site.member == "scale_loss" for site in by_path[path].amp_sites):
            continue  # the proof starts from every definition of the launcher: it reaches these
        around = around or _AroundLaunchers(by_path, others)
        unbound: List[str] = []
        if _may_reach_a_scaled_loss(path, by_path, definitions, around, unbound) is None:
            plan.files[path] = replace(
                current, nothing_scaled=True, unscaled_here=True, unbound_reached=unbound[0] if unbound else ""
            )
            continue
        # what the launcher itself says (a first run does not change it): no other note names
        # the place, so the reason says what is unknown
        unknown = not_a_script(path, by_path[path])
        if unknown is not None and path in launchers and current.note_for(SCALED_ELSEWHERE) is None:
            note = f"{NOT_PROVEN}: {unknown}"
            plan.files[path] = replace(current, notes=current.notes + ((SCALED_ELSEWHERE, note),))


def _inference_loaders(by_path: Dict[str, ModuleSummary]) -> Set[str]:
    """The files whose every amp.initialize is for inference (no optimizers) and that load
    apex's loss-scaler state (Glow-TTS's inference script restoring a training checkpoint):
    where nothing their run reaches scales a loss, that load changes nothing and can go."""
    return {
        path for path, summary in by_path.items()
        if not summary.training_inits
        and any(site.member in ("initialize", "init") for site in summary.amp_sites)
        and any(site.member == "load_state_dict" for site in summary.amp_sites)
    }


class _AroundLaunchers:
    """What the reach proof asks of the whole repository, the same for every launcher: read
    once (each launcher asking it of every walked file made the plan quadratic: 12 s for a
    tree of 100 scripts among 3,000 files)."""

    def __init__(self, by_path: Dict[str, ModuleSummary], others: Sequence[Tuple[str, str, bytes]]) -> None:
        #: why a ``scale_loss`` somewhere cannot be placed, else None
        self.unplaced: Optional[str] = None
        for summary in by_path.values():
            if summary.scale_loss_named and not summary.scale_loss_placed and not any(
                site.member == "scale_loss" for site in summary.amp_sites
            ):
                self.unplaced = f"{summary.shown} names scale_loss through a name the index does not follow"
                break
        else:
            named = next((shown for _p, shown, source in others if names_scale_loss(source)), None)
            self.unplaced = f"{named} names scale_loss" if named is not None else None
        self.others = others
        self.by_path = by_path
        self._import_line_words: Optional[Dict[bytes, List[Tuple[str, str]]]] = None

    @property
    def import_line_words(self) -> Dict[bytes, List[Tuple[str, str]]]:
        """A word on an import line of a file the index left out -> those files (path,
        shown); read on first use (a proof that stops before asking for importers, as where
        some ``scale_loss`` is not placed, need not read every file's import lines)."""
        if self._import_line_words is None:
            words: Dict[bytes, List[Tuple[str, str]]] = {}
            for path, shown, source in self.others:
                for line in _IMPORT_LINE.findall(source):
                    for word in set(re.findall(rb"\w+", line)):
                        words.setdefault(word, []).append((path, shown))
            self._import_line_words = words
        return self._import_line_words

    def files_importing(self, path: str) -> List[str]:
        """The files naming the module of ``path`` on an import line: indexed files by the
        names they import, the others by a text search."""
        stem = module_stem(path)
        indexed = [p for p, s in self.by_path.items() if any(stem in n.split(".") for n in s.import_lines)]
        return indexed + [p for p, _shown in self.importers(stem)]

    def importers(self, stem: str) -> List[Tuple[str, str]]:
        """The files the index left out with ``stem`` as a word on an import line."""
        if re.fullmatch(r"\w+", stem, re.ASCII):
            return self.import_line_words.get(stem.encode(), [])
        line = re.compile(rb"^[ \t]*(from|import)[ \t][^\n]*\b" + re.escape(stem.encode()) + rb"\b", re.MULTILINE)
        return [(p, shown) for p, shown, source in self.others if line.search(source)]


_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from|import)[ \t][^\n]*", re.MULTILINE)


def _names_a_scaler(summary: ModuleSummary) -> bool:
    return "GradScaler" in summary.identifiers or "GradScaler" in summary.loaded_attributes


def _scales_natively(summary: ModuleSummary, name: str) -> bool:
    """Whether the top-level ``name`` may scale a loss through a GradScaler (what a first
    run made of an ``amp.scale_loss``): it reads ``.scale`` and ``.update`` or ``.step``."""
    read = summary.definition_attributes.get(name, set())
    return "scale" in read and bool(read & {"update", "step", "unscale_"})


def _may_reach_a_scaled_loss(
    launcher: str,
    by_path: Dict[str, ModuleSummary],
    definitions: "_Definitions",
    around: _AroundLaunchers,
    unbound: Optional[List[str]] = None,
) -> Optional[str]:
    """None only when it is proven that no code the launcher runs scales a loss: the launcher
    is a script (``launcher_scripts.not_a_script``) no other file imports, and every top-level
    definition of it, what each calls in its own file and in others (a class reached with all
    its methods), what importing each reached file runs outside its ``__main__`` guard, and
    every definition a reached file hands on as a value owns no ``amp.scale_loss`` (and, for a
    launcher on apexcompat.amp, no GradScaler use: ``launcher_scripts.on_the_shim``).
    Otherwise (a file that cannot be read, a star import of the repository, a ``scale_loss``
    the index does not place) it says why not, for debugging and tests.
    An ``amp.scale_loss`` that reads a name amp bound only in another function raises
    NameError before it scales, in the original too: it scales nothing, and where it is
    reached goes into ``unbound``."""
    if around.unplaced is not None:
        return around.unplaced
    why = not_a_script(launcher, by_path[launcher])
    if why is not None:
        return why
    # each file that may import the launcher must be proven unable to run its initialize
    for path in around.files_importing(launcher):
        why = importer_refusal(path, launcher, definitions) if path != launcher else None
        if why is not None:
            return why

    shim = on_the_shim(by_path[launcher])

    def file_check(path: str, summary: ModuleSummary) -> Optional[str]:
        attributed = {site.owner for site in summary.amp_sites if site.member == "scale_loss"}
        if summary.scale_loss_named and not attributed and not summary.scale_loss_placed:
            return f"{summary.shown} names scale_loss through a name the index does not follow"
        if shim and _names_a_scaler(summary) and path != launcher:
            return f"{summary.shown} uses a GradScaler"
        return None

    def item_check(path: str, summary: ModuleSummary, name: str) -> Optional[str]:
        if any(site.owner == name and site.member == "scale_loss" for site in summary.amp_sites):
            return f"{name} of {summary.shown} scales a loss"
        if shim and _scales_natively(summary, name):
            return f"{name} of {summary.shown} may scale through a GradScaler"
        if name in summary.scale_loss_owners:
            return f"{name} of {summary.shown} scales a loss through an attribute scale_loss"
        for owner, method, _line in summary.unbound_scales if unbound is not None else ():
            if owner == name and _star_may_bind(definitions, path, summary.unbound_names):
                names = ", ".join(sorted(summary.unbound_names))
                return f"{name} of {summary.shown} reads {names}, which a star import may bind"
            if owner == name:
                where = f"{name}.{method}()" if method else f"{name}()"
                unbound.append(f"{where} of this file" if path == launcher else f"{summary.shown} ({where})")
        return None

    return what_a_run_reaches(launcher, definitions, file_check, item_check, follow_stars=True)


def _star_may_bind(definitions: "_Definitions", path: str, names: Set[str], seen: Optional[Set[str]] = None) -> bool:
    """Whether a star import of ``path`` (or of the modules it star-imports) may bind one of
    ``names``: a module outside the repository, one that binds it, or one whose module level
    imports apex.amp under it."""
    seen = seen if seen is not None else {path}
    summary = definitions.raw(path)
    for module in sorted(summary.star_imports if summary is not None else ()):
        target = definitions.resolver.resolve(module, path)
        star = definitions.raw(target) if target is not None else None
        if star is None or names & star.module_amp_names:
            return True
        if any(definitions.stars.exports(module, path, n)[0] != NOT_BOUND for n in names):
            return True
        if target not in seen:
            seen.add(target)
            if _star_may_bind(definitions, target, names, seen):
                return True
    return False


def _with_wrappers(
    plan: RepoPlan, by_path: Dict[str, ModuleSummary], unindexed: Dict[str, Tuple[str, bytes]], definitions
) -> RepoPlan:
    """``plan`` with the optimizer wrapper classes each file that scales a loss names."""
    proven: Dict[Def, bool] = {}
    for path, summary in by_path.items():
        if not any(site.member == "scale_loss" for site in summary.amp_sites):
            continue
        candidates = [(name, (path, name)) for name in summary.optimizer_wrappers]
        for local, (module, attr) in summary.imports.items():
            item = definitions.find(module, attr, path, anywhere=True) if attr else None
            if item is not None:
                candidates.append((local, item))
        found: Dict[str, str] = {}
        for local, item in candidates:
            owner = definitions.summary(item[0])
            held = owner.optimizer_wrappers.get(item[1]) if owner is not None else None
            if held is None:
                continue
            if item not in proven:
                proven[item] = _no_overriding_heir(item, by_path, definitions)
            if proven[item]:
                found[local] = held
        if found:
            own = plan.files.get(path, FilePlan())
            plan.files[path] = replace(own, optimizer_wrappers=tuple(sorted(found.items())))
    return plan


def _no_overriding_heir(item: Def, by_path, definitions) -> bool:
    """Whether no class of the walked files that derives from ``item`` (directly or not)
    redefines ``step`` or ``param_groups``, so an instance of any of them is stepped as
    ``item`` proves."""
    for path, cls in derived_classes(item, by_path, definitions) - {item}:
        summary = definitions.summary(path)
        if summary is not None and summary.class_members.get(cls, set()) & PROVEN_MEMBERS:
            return False
    return True


def _needy_base(item: Def, by_path: Dict[str, ModuleSummary], definitions, unreached: Set[Def]) -> Optional[Def]:
    """A base class of the class ``item`` (directly or not) among ``unreached``: definitions
    that use amp (save its state, scale a loss) and that no route gives the GradScaler, in a
    file without an initialize of its own (a pytorch-template ``BaseTrainer`` whose
    ``_save_checkpoint`` saves ``amp.state_dict()``).  An instance of ``item`` runs those
    methods, so ``item`` cannot come out native while they keep apex.amp."""
    seen: Set[Def] = set()
    work = [item]
    while work:
        path, cls = work.pop()
        summary = by_path.get(path)
        if summary is None or (path, cls) in seen:
            continue
        seen.add((path, cls))
        for text in summary.class_bases.get(cls, ()):
            base = _base_def(text, path, summary, definitions)
            if base is None or base[0] not in by_path:
                continue
            if base in unreached and not by_path[base[0]].training_inits:
                return base
            work.append(base)
    return None


def derived_classes(item: Def, by_path, definitions, by_name: bool = False, unresolved_by_name: bool = False) -> Set[Def]:
    """``item`` and every class of the walked files that derives from it, directly or not
    (a file the index left out is read only when it names one of them).  ``by_name``: also a
    base whose names match (``named_base``), a superset for the checks that only refuse;
    ``unresolved_by_name``: that only for a base no import resolves to a file."""
    family, names = {item}, {item[1]}
    grew = True
    while grew:
        grew = False
        naming = frozenset().union(*(definitions.naming(n) for n in names))
        for path in list(by_path) + [p for p in definitions.unindexed if p in naming]:
            summary = definitions.summary(path)
            if summary is None:
                continue
            for cls, bases in summary.class_bases.items():
                if (path, cls) in family or not any(
                    _derives(b, path, summary, definitions, family, by_name, unresolved_by_name) for b in bases
                ):
                    continue
                family.add((path, cls))
                names.add(cls)
                grew = True
    return family


def _derives(base: str, path: str, summary: ModuleSummary, definitions, family: Set[Def], by_name: bool,
             unresolved_by_name: bool) -> bool:
    """Whether the base written ``base`` in ``path`` is a class of ``family`` (``derived_classes``)."""
    found = _base_def(base, path, summary, definitions)
    if found in family:
        return True
    return (by_name or (unresolved_by_name and found is None)) and named_base(base, summary, family)


def _base_def(text: str, path: str, summary: ModuleSummary, definitions) -> Optional[Def]:
    """The definition a base class written ``text`` in ``path`` denotes, if found."""
    head, _, rest = text.partition(".")
    if not rest:
        if text in summary.classes:
            return (path, text)
        module, attr = summary.imports.get(text, ("", ""))
        return definitions.find(module, attr, path, anywhere=True) if attr else None
    module, attr = summary.imports.get(head, ("", ""))
    if not module or attr:
        return None
    middle, _, name = rest.rpartition(".")
    return definitions.find(f"{module}.{middle}" if middle else module, name, path, anywhere=True)

