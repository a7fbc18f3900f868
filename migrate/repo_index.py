"""The repository index: one cheap read of every admitted file with the stdlib ``ast``.

Each file becomes a :class:`ModuleSummary`: the names it imports (resolved to files of the
same repository by :class:`ModuleResolver`), its top-level functions and classes, where it
uses ``apex.amp`` (or ``apexcompat.amp``) and inside which top-level definition, and which
imported functions and classes each definition calls.  The cross-file plan
(``repo_plan``) reads only these summaries; LibCST is never involved here.
"""

from __future__ import annotations

import ast
import builtins
import io
import os
import tokenize
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from . import stdlib_trees
from .runtime_classes import RUNTIME_IMPORT_MARKERS, runtime_builds
from .ast_table import FastNodeVisitor, NodeTable
from .forward_fed import handed_calls
from .bindings import FunctionFacts, read_function_facts
from .held_optimizers import HeldFacts, read_held_facts
from .built_route import ObjectBuild, read_object_builds
from .dict_spreads import read_dict_spreads
from .parser_factories import FlagDefaults, parser_factories
from .runner_frameworks import FrameworkFacts, read_framework_facts
from .optimizer_wrappers import base_texts, class_members, scaler_steppable_attribute, wrapped_attribute
from .amp_flag_index import flag_parameters
from .setup_loops import initializes_only

#: the modules whose ``amp`` the tool migrates
AMP_MODULES = ("apex.amp", "apexcompat.amp")
#: amp members whose use needs the GradScaler in native code
SCALER_MEMBERS = frozenset({"scale_loss", "state_dict", "load_state_dict"})
#: the text whose absence from every file of a repository proves that no loss is scaled
SCALE_LOSS_TEXT = b"scale_loss"
#: where a name is used when it is not inside any top-level def
MODULE_LEVEL = "<module>"
#: context managers that do nothing when entered without arguments
NOOP_CONTEXTS = frozenset({("contextlib", "suppress"), ("contextlib", "nullcontext")})


@dataclass
class AmpSite:
    """``amp.<member>(...)`` at ``line``, inside the top-level definition ``owner``."""

    member: str
    line: int
    owner: str
    #: ``initialize`` given optimizers (training), as opposed to inference
    training: bool = False
    #: the method of the top-level class ``owner`` it is in ("" elsewhere)
    method: str = ""
    #: the if/elif/else chains around the site in its definition: (chain, branch) pairs;
    #: None when a loop lies between them
    branches: Optional[Tuple[Tuple[int, int], ...]] = ()
    #: a training initialize whose loss scaler is provably dynamic (no ``loss_scale``, or
    #: ``"dynamic"``)
    dynamic: bool = False
    #: a ``scale_loss`` whose loss is a parameter of its method: that parameter's position
    #: (``self`` is 0) and name; -1 / "" otherwise
    loss_param: int = -1
    loss_name: str = ""
    #: ``num_losses=N`` of an initialize, when a literal (apex keeps one loss scaler per loss)
    num_losses: int = 1
    #: an initialize without ``num_losses=`` whose options come in a ``**`` dict: how many
    #: loss scalers apex kept is read from that dict when it runs
    losses_at_run_time: bool = False
    #: in a method: its first parameter (``self``); and the attribute of it given as the
    #: optimizer (``self.optimizer`` of ``amp.initialize(self.net, self.optimizer)`` or of
    #: ``amp.scale_loss(loss, self.optimizer)``: "optimizer"), else ""
    receiver: str = ""
    optimizer_attr: str = ""
    #: the test of the innermost ``if`` whose body holds the site, in its definition (an
    #: ``else`` branch holds it under the ``if`` above), as written; "" when none
    guard: str = ""
    #: the optimizer given as ``name.attribute`` (``fitter.optimizer``), anywhere, else ""
    optimizer_text: str = ""
    #: a ``scale_loss``'s optimizer and ``loss_id`` where each is a bare name (else ""):
    #: the glue route matches them with the parameters of a top-level helper
    optimizer_name: str = ""
    loss_id_name: str = ""
    #: a ``scale_loss`` in a method given ``self.<attr>`` or a list/tuple of them as its
    #: optimizers: those attributes, in order (else empty)
    optimizer_attrs: Tuple[str, ...] = ()
    #: a ``scale_loss`` in a top-level function whose loss is a bare name among that
    #: function's positional parameters: that name, else "" (``caller_step_plan``)
    loss_argument: str = ""


@dataclass
class CallSite:
    """A call of an imported name: ``text`` as written (``do_train``, ``engine.do_train``),
    ``module``/``name`` what it denotes, inside the top-level definition ``owner``."""

    text: str
    module: str
    name: str
    line: int
    owner: str
    #: the method of the top-level class ``owner`` it is in ("" elsewhere)
    method: str = ""
    #: at module level under ``if __name__ == "__main__":`` (it does not run on import)
    guarded: bool = False


@dataclass
class AmpArgument:
    """``amp`` itself passed to a call of an imported function (``restore(path, amp=amp)``),
    or of a method on a plain name (``state.track_amp_state(amp)``: ``receiver`` "state",
    ``name`` the method, ``module`` empty): by ``keyword``, else at ``position``, inside the
    top-level definition ``owner``."""

    text: str
    module: str
    name: str
    keyword: str
    position: int
    line: int
    owner: str
    receiver: str = ""


#: how a helper may use a parameter that receives apex.amp for the GradScaler to do instead:
#: the two state methods the GradScaler shares, ``master_params(opt)`` (the optimizer's own
#: parameters, for apex.amp too), tests of whether anything was passed, and keeping it on
#: ``self`` in a class's ``__init__`` for the methods to use so
STATE_USES = frozenset({"state_dict", "load_state_dict", "master_params", "none_check", "stored"})
#: how a consumer may use what it is given for an object that stands in apex.amp's place
#: without the consumer being rewritten (``checkpoints.HOLDER``): its two state methods, a
#: test, and ``load_state_dict(x, strict=False)``, which raises TypeError for apex.amp as for
#: the stand-in (both take the state alone); not keeping it, which other code may then read
HOLDER_USES = frozenset({"state_dict", "load_state_dict", "none_check", "type_error"})
#: how a function may use a parameter given apex.amp (or None) by every call for that
#: parameter to carry the GradScaler instead (``amp_value_plan``): it scales losses through
#: it, and may also test it, save/load its state and read ``master_params(opt)``
SCALING_USES = frozenset({"scale_loss", "state_dict", "load_state_dict", "master_params", "none_check"})
#: the key of ``parameter_uses`` for the values a function's ``**kwargs`` is given
VAR_KEYWORD = "**"


@dataclass
class MethodCall:
    """``receiver.method(...)`` on a plain name, inside the top-level definition ``owner``."""

    receiver: str
    method: str
    line: int
    owner: str
    #: the receiver is the instance of the method it is in (``self.m()`` in a method of the
    #: class ``owner``, not a static one)
    on_self: bool = False


#: names whose use reads (or rescales) the gradients a backward left
GRADIENT_READS = frozenset({
    "grad", "clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_master_grads", "unscale_",
    "master_params",
})
#: methods of a torch module that return the module itself (``GAN().to(device)``)
RETURNS_SELF = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval"})
#: a binding of a name that keeps the object of the name it unpacks (``model, opt =
#: amp.initialize(model, opt)`` gives the same model back)
SAME_OBJECT = "same"
#: torch's module wrappers, whose instances have no attribute but the wrapper's own (no
#: ``__getattr__`` hands a method call on to the wrapped module): a method of the wrapped
#: model called on one raises AttributeError, so it is no call of a repository class's method
TORCH_WRAPPERS = frozenset({
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
})
#: a binding by anything else
OTHER = "other"


@dataclass
class ModuleSummary:
    path: str
    shown: str
    #: local name -> (absolute module, attribute or "" for ``import m``)
    imports: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    functions: Set[str] = field(default_factory=set)
    classes: Set[str] = field(default_factory=set)
    #: top-level definition -> names of the same file's top-level defs it calls
    local_calls: Dict[str, Set[str]] = field(default_factory=dict)
    #: top-level function -> its positional parameters' names, in order
    function_params: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    amp_sites: List[AmpSite] = field(default_factory=list)
    calls: List[CallSite] = field(default_factory=list)
    #: every identifier of the file (to choose new names that clash with nothing)
    identifiers: Set[str] = field(default_factory=set)
    #: the text ``scale_loss`` occurs anywhere in the file (a loss may be scaled here through
    #: some name of amp the index does not follow: ``self.amp.scale_loss``, an old-API handle)
    scale_loss_named: bool = False
    #: names referenced other than as a callee (passed on, stored, decorated, subclassed);
    #: after ``summarise``, only the file's own top-level defs and its imported names
    escaping: Set[str] = field(default_factory=set)
    #: names referenced as a value: as ``escaping`` (before ``summarise`` narrows it), less
    #: the names only written as a class's base (``registry["x"] = Base`` is one)
    valued: Set[str] = field(default_factory=set)
    #: lines where ``amp`` itself is used as a value (passed on, stored)
    amp_values: List[int] = field(default_factory=list)
    #: of those, the lines of ``amp = None`` in an ``except`` handler: apex not installed,
    #: nothing handed on
    amp_unset: List[int] = field(default_factory=list)
    #: names bound to a no-op context manager class (``amp_autocast = suppress``)
    noop_contexts: Set[str] = field(default_factory=set)
    #: (class, method) pairs a method of that class calls on ``self``
    self_calls: Set[Tuple[str, str]] = field(default_factory=set)
    #: (class, method) -> the methods of that class it calls on ``self``
    method_self_calls: Dict[Tuple[str, str], Set[str]] = field(default_factory=dict)
    #: (class, method) -> the methods it calls through ``super()`` (``super().setup()``)
    method_super_calls: Dict[Tuple[str, str], Set[str]] = field(default_factory=dict)
    #: (class, method) pairs whose first parameter is used other than as ``self.x`` or as
    #: the argument of ``super(...)``: handed on, stored or rebound (any code may then call
    #: its methods)
    self_handed: Set[Tuple[str, str]] = field(default_factory=set)
    #: top-level class -> its methods with a decorator other than staticmethod/classmethod
    #: (a property, a setter, a descriptor: run by reading or setting an attribute)
    decorated_methods: Dict[str, Set[str]] = field(default_factory=dict)
    #: attributes ``X`` of a method's first parameter stepped there (``self.X.step(...)``)
    self_steps: Set[str] = field(default_factory=set)
    #: (class, method) -> those attributes, by the method that steps them
    method_steps: Dict[Tuple[str, str], Set[str]] = field(default_factory=dict)
    #: (class, method) of the methods that read gradients (``.grad``, a gradient clip, an
    #: ``unscale_``, ``master_params``; nested functions included)
    gradient_methods: Set[Tuple[str, str]] = field(default_factory=set)
    #: top-level definitions (a class: through any of its methods) that read ``.grad`` off an
    #: object (``p.grad``, ``bn.weight.grad.data``; not ``torch.autograd.grad``)
    grad_readers: Set[str] = field(default_factory=set)
    #: (class, method) of the methods that call a ``backward``, a ``step`` or a
    #: ``scale_loss`` of anything (nested functions included)
    stepping_methods: Set[Tuple[str, str]] = field(default_factory=set)
    #: top-level definitions whose own code (outside a class's methods) calls a ``step`` of
    #: anything (``caller_step_plan``: a backward helper that steps itself is none)
    stepping_definitions: Set[str] = field(default_factory=set)
    #: calls of imported functions given ``amp`` itself as an argument
    amp_arguments: List[AmpArgument] = field(default_factory=list)
    #: top-level function -> its positional parameters in order, then its keyword-only ones
    parameters: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]] = field(default_factory=dict)
    #: top-level function -> parameter -> how the body uses it (``STATE_USES`` or "other");
    #: ``VAR_KEYWORD`` for the values of its ``**kwargs`` when the body only loops over them
    parameter_uses: Dict[str, Dict[str, Set[str]]] = field(default_factory=dict)
    #: (top-level class, method defined in its body) -> its positional parameters after the
    #: first, then its keyword-only ones, and how the method uses each
    method_parameters: Dict[Tuple[str, str], Tuple[Tuple[str, ...], Tuple[str, ...]]] = field(default_factory=dict)
    method_parameter_uses: Dict[Tuple[str, str], Dict[str, Set[str]]] = field(default_factory=dict)
    #: top-level class -> its class methods every ``return`` of which builds ``cls(...)``
    class_factories: Dict[str, Set[str]] = field(default_factory=dict)
    #: top-level class -> its methods but the static ones: reading one through the class
    #: (``GAN.train_step``, a class method that may build an instance) hands the class away,
    #: reading a class attribute or a static method does not
    plain_methods: Dict[str, Set[str]] = field(default_factory=dict)
    #: imported classes read as ``Name.attr`` (not called there): local name -> attributes
    attribute_reads: Dict[str, Set[str]] = field(default_factory=dict)
    #: calls of methods on plain names (``model.train_step(...)``)
    method_calls: List[MethodCall] = field(default_factory=list)
    #: (top-level definition, local name) -> what each assignment binds it to: the local
    #: name of the class whose constructor call it holds (``GAN().to(device)``), SAME_OBJECT
    #: or OTHER
    bindings: Dict[Tuple[str, str], List[str]] = field(default_factory=dict)
    #: the runner framework's hooks, runners, runner builds and autocast switches here
    framework: FrameworkFacts = field(default_factory=FrameworkFacts)
    #: top-level optimizer wrapper classes -> the attribute holding the wrapped optimizer
    #: (``optimizer_wrappers.wrapped_attribute``)
    optimizer_wrappers: Dict[str, str] = field(default_factory=dict)
    #: top-level classes whose step can be handed a GradScaler for the optimizer they hold
    #: -> that attribute (``optimizer_wrappers.scaler_steppable_attribute``)
    scaler_steppable: Dict[str, str] = field(default_factory=dict)
    #: top-level class -> its bases as dotted names, and the names its body defines
    class_bases: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    class_members: Dict[str, Set[str]] = field(default_factory=dict)
    #: attributes apex.amp itself is stored on (``args.amp = amp``: "amp")
    amp_stores: Set[str] = field(default_factory=set)
    #: every attribute name read anywhere in the file (``x.amp``, ``self.args.amp``), apex's
    #: own ``apex.amp`` left out
    loaded_attributes: Set[str] = field(default_factory=set)
    #: every attribute name of the file, read, set or deleted (``self.scaler = 2``)
    attribute_names: Set[str] = field(default_factory=set)
    #: the same, only those read off an object rather than an imported module (``model.amp``,
    #: not ``torch.amp`` or ``torch.cuda.amp``)
    object_attributes: Set[str] = field(default_factory=set)
    #: the others: those read off a chain rooted at an imported name (``core.train``,
    #: ``lib.core.steps.train``), a module's function among them
    imported_attributes: Set[str] = field(default_factory=set)
    #: the same per top-level definition (a class: all its methods), MODULE_LEVEL for the rest
    definition_attributes: Dict[str, Set[str]] = field(default_factory=dict)
    #: per top-level definition: the (name, attribute) pairs read as ``name.attribute``
    #: (``args.amp`` in ``train_step``: which parameter carries the attribute)
    name_attributes: Dict[str, Set[Tuple[str, str]]] = field(default_factory=dict)
    #: modules imported with ``from m import *`` (absolute)
    star_imports: Set[str] = field(default_factory=set)
    #: what each import statement names, absolute, -> its first line: ``m.a.b`` for ``import
    #: m.a.b``, ``m.name`` for ``from m import name``, ``m.*`` for ``from m import *``
    import_lines: Dict[str, int] = field(default_factory=dict)
    #: plain names of this file (not imported) called with apex.amp itself as an argument
    #: (``run_epoch(model, amp)``; any name some scope imports amp as counts): a same-file
    #: function that may take it as a parameter
    amp_local_calls: Set[str] = field(default_factory=set)
    #: method name -> the arguments of each ``R.method(...)`` call, marked forward outputs or
    #: not (``forward_fed.handed_calls``)
    handed_calls: Dict[str, List[Tuple[Tuple[str, bool], ...]]] = field(default_factory=dict)
    #: plain names called anywhere (``main()``; not in ``identifiers``)
    called_names: Set[str] = field(default_factory=set)
    #: plain names called at module level outside ``if __name__ == "__main__":`` (what
    #: importing the file runs; the file's own top-level defs among them)
    module_calls: Set[str] = field(default_factory=set)
    #: the file has a module-level ``if __name__ == "__main__":`` (it is run as a script)
    main_guard: bool = False
    #: calls given arguments through an attribute of anything but a module this file imports
    #: (``runner.fit(opts, net)``, ``make()[k].fit(opts)``), -> how each fills the callee's
    #: slots: (positional count, keyword names, whether it unpacks ``*``/``**``)
    attribute_calls: Dict[str, List[Tuple[int, Tuple[str, ...], bool]]] = field(default_factory=dict)
    #: attribute names read other than as the callee of a call (``Thread(target=runner.fit)``)
    attribute_values: Set[str] = field(default_factory=set)
    #: top-level classes whose own ``__init__`` calls no ``super().__init__`` nor
    #: ``<name>.__init__``: their instances may lack what a base's ``__init__`` sets
    unchained_inits: Set[str] = field(default_factory=set)
    #: ``target = Class(...)`` / ``target = (A if c else B)(...)`` (``built_route``)
    object_builds: List[ObjectBuild] = field(default_factory=list)
    #: in a file with a training initialize: its top-level functions that hand a module's
    #: function to a method call (``tl.override_backward(m.fn)``, see ``bindings``)
    function_facts: Dict[str, FunctionFacts] = field(default_factory=dict)
    #: names given to ``super(Name, self)``; those named as values nowhere else (``escaping``
    #: holds both)
    super_named: Set[str] = field(default_factory=set)
    super_only: Set[str] = field(default_factory=set)
    #: the held-optimizer route's facts (``held_optimizers``)
    held: HeldFacts = field(default_factory=HeldFacts)
    #: top-level definition -> the source of each of its decorators (``MODELS.register_module()``)
    decorators: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    #: (line, top-level definition, attribute) of each ``m.Attr(...)`` whose ``m`` is a module
    #: imported by name at run time (``runtime_classes.runtime_builds``)
    runtime_builds: List[Tuple[int, str, str, str]] = field(default_factory=list)
    #: ``dict(...)`` call line -> the calls its local is spread into (``dict_spreads``)
    dict_spreads: Dict[int, Tuple[str, ...]] = field(default_factory=dict)
    #: what a ``from <this module> import *`` may take (``star_imports``): the names of a
    #: static module-level ``__all__`` (a list or tuple of strings), None without one;
    #: ``all_dynamic`` when ``__all__`` is anything else or changed after (then unknown)
    all_names: Optional[Tuple[str, ...]] = None
    all_dynamic: bool = False
    #: names bound other than by a top-level def, class or import: assignment, loop, with,
    #: except and comprehension targets, parameters, nested defs, ``global``, in any scope
    bound_names: Set[str] = field(default_factory=set)
    #: the same, only those bound at module level (a ``global`` declaration counts)
    module_bound: Set[str] = field(default_factory=set)
    #: top-level def or class -> the line it starts on
    def_lines: Dict[str, int] = field(default_factory=dict)
    #: calls of plain names not imported by name (``Fitter(...)``: a star import may bind it);
    #: ``module`` is empty
    plain_calls: List[CallSite] = field(default_factory=list)
    #: ``hooks.Hook(...)`` where ``hooks`` is bound by ``from pkg import hooks``: ``module`` is
    #: ``pkg.hooks``, read as a call only where that name is proven to bind the submodule
    #: (``submodule_calls``)
    submodule_calls: List[CallSite] = field(default_factory=list)
    #: ``amp.scale_loss(...)`` where ``amp`` is apex.amp only in another function's scope (its
    #: import there): (top-level definition, method, line); it raises NameError (APX234)
    unbound_scales: List[Tuple[str, str, int]] = field(default_factory=list)
    #: top-level definitions (or MODULE_LEVEL) that read ``.scale_loss`` off something other
    #: than apex.amp (``args.amp.scale_loss``, an old-API handle), ``unbound_scales`` left out
    scale_loss_owners: Set[str] = field(default_factory=set)
    #: every ``scale_loss`` the code names is an apex.amp site or one of those reads, so the
    #: definitions above (and the amp sites) are all that may scale a loss here
    scale_loss_placed: bool = False
    #: the names ``unbound_scales`` read (``amp``), and the names the module level binds to
    #: apex.amp (a star import of this file hands them on)
    unbound_names: Set[str] = field(default_factory=set)
    module_amp_names: Set[str] = field(default_factory=set)
    #: top-level functions that build an argparse parser and return it -> the defaults of
    #: the flags they add (``parser_factories``)
    parser_factories: Dict[str, FlagDefaults] = field(default_factory=dict)

    @property
    def training_inits(self) -> List[AmpSite]:
        return [s for s in self.amp_sites if s.member in ("initialize", "init") and s.training]

    def initializes_once(self) -> bool:
        """One training initialize, or several that are alternatives: one definition, each
        pair in different branches of one if/elif/else chain, no loop around them."""
        inits = self.training_inits
        if len({s.owner for s in inits}) != 1 or any(s.branches is None for s in inits):
            return False
        paths = [dict(s.branches or ()) for s in inits]
        return all(
            any(chain in b and b[chain] != branch for chain, branch in a.items())
            for i, a in enumerate(paths)
            for b in paths[i + 1 :]
        )

    def initializes_in_sequence(self) -> bool:
        """Several training initializes one after the other in one definition, on one path
        (the same if/elif/else branches, no loop around them): apex replaced its loss scalers
        at each, so the last one's serve every optimizer."""
        inits = self.training_inits
        if len(inits) < 2 or len({s.owner for s in inits}) != 1 or any(s.branches is None for s in inits):
            return False
        return len({s.branches for s in inits}) == 1

    def owners_needing_scaler(self) -> Set[str]:
        return {s.owner for s in self.amp_sites if s.member in SCALER_MEMBERS}

    def handed_away(self, name: str) -> str:
        """How the top-level definition ``name``, which this file hands on, is handed on: by
        its decorators when it has any (a registry's ``@MODELS.register_module()`` keeps the
        class to build it by name), else as a value."""
        decorators = self.decorators.get(name, ())
        if decorators:
            shown = " and ".join(f"@{text}" for text in decorators)
            return f"handed to its decorator {shown}, which may keep it to build it by name"
        return "registered or passed on as a value"

    def called_wrappers(self) -> Set[str]:
        """Top-level classes whose ``__call__`` scales a loss: ``loss_scaler(loss, optimizer)``."""
        return {s.owner for s in self.amp_sites if s.member == "scale_loss" and s.method == "__call__"}


def none_in_block(test: ast.expr, in_body: bool, block: List[ast.stmt]) -> str:
    """The name ``test`` proves None in ``block`` (the body of ``if X is None:``, the
    ``else`` of ``if X is not None:``) when the block never rebinds it; else ""."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
        return ""
    right = test.comparators[0]
    if not (isinstance(right, ast.Constant) and right.value is None):
        return ""
    if not isinstance(test.ops[0], ast.Is if in_body else ast.IsNot):
        return ""
    name = test.left.id
    for stmt in block:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
                return ""
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return ""
    return name


def _package_of(path: str, level: int) -> Optional[List[str]]:
    """The dotted parts of the package a relative import of ``level`` starts from, counted
    from the file's directory upwards while directories are packages."""
    directory = os.path.dirname(os.path.abspath(path))
    parts: List[str] = []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parts.insert(0, os.path.basename(directory))
        directory = os.path.dirname(directory)
    if level - 1 > len(parts):
        return None
    return parts[: len(parts) - (level - 1)]


def _absolute(node: ast.ImportFrom, path: str) -> Optional[str]:
    if not node.level:
        return node.module or ""
    package = _package_of(path, node.level)
    if package is None:
        return None
    return ".".join(package + ([node.module] if node.module else []))


class _Reader(FastNodeVisitor):
    """Fills one summary in a single walk of the tree."""

    def __init__(self, summary: ModuleSummary, table: Optional[NodeTable] = None) -> None:
        self.s = summary
        #: the file's nodes (the methods' uses of ``self`` are read off it); needed to visit
        #: a tree's methods, not its imports alone
        self.table = table
        self.owner = MODULE_LEVEL
        self.method = ""
        #: the test of the innermost ``if`` whose body the visit is in (``AmpSite.guard``)
        self.guard = ""
        #: the method being visited is a static method, or a class nested in a definition is
        #: (the first parameter of what is visited is no instance of ``owner``)
        self.static = False
        #: module-level names that denote the amp module, and names bound to one of its members
        self.amp_names: Set[str] = set()
        #: the names a function imports the amp module as, one set per function being visited
        #: (innermost last): they denote it in that function and the functions nested in it only
        self.local_amp_names: List[Set[str]] = []
        #: the attributes of the method's first parameter it stores the amp module on
        #: (``self.amp_lib = amp``), one set per function being visited: read in that same
        #: function, ``self.amp_lib.initialize(...)`` is an amp site
        self.local_amp_attributes: List[Set[str]] = []
        self.apex_roots: Set[str] = set()
        self.member_names: Dict[str, str] = {}
        #: the (chain, branch) pairs of the if/elif/else chains being visited; None in a loop
        self.branches: Optional[Tuple[Tuple[int, int], ...]] = ()
        #: names the enclosing ifs of the block being visited prove None there
        #: (``if optimizer is None:``, the ``else`` of ``is not None``; ``none_in_block``)
        self.none_names: Tuple[str, ...] = ()
        #: the positional parameters of the method being visited
        self.method_params: List[str] = []
        #: plain names of this file called, -> the plain names given to them; the names any
        #: function imported the amp module as
        self.local_call_names: Dict[str, Set[str]] = {}
        self.every_local_amp_name: Set[str] = set()
        #: the attributes visited as the callee of a call (``attribute_values`` leaves them out)
        self.callees: Set[ast.AST] = set()
        #: the class names given to ``super(Class, self)``
        self.super_args: Set[ast.AST] = set()
        #: the Names written as the bases of a class (``class A(Base):``)
        self.base_names: Set[ast.AST] = set()
        #: the Names read in type annotations (``def f(net: Net) -> Net``, ``x: Net = ...``):
        #: naming a class or function there hands it to nobody
        self.annotation_names: Set[ast.AST] = set()
        #: inside the body of a module-level ``if __name__ == "__main__":``
        self.main_guard = False
        #: how many statements bind ``__all__`` (one static assignment, or it is dynamic)
        self.all_stores = 0
        #: ``X.scale_loss(...)`` where ``X`` is not apex.amp in that scope: (X, owner, method, line)
        self.name_scales: List[Tuple[str, str, str, int]] = []
        #: every ``<expr>.scale_loss`` read where ``<expr>`` is not apex.amp in that scope:
        #: (owner, the name ``<expr>`` is, else "")
        self.attribute_scales: List[Tuple[str, str]] = []
        #: module-level function -> its parameter that is apex.amp (or None) tested as a flag
        #: and initialized under that test (``amp_flag_index``)
        self.flag_params: Dict[str, str] = {}

    def amp_local_calls(self) -> Set[str]:
        """``amp_local_calls``, counting a name any scope binds to the amp module (a superset:
        the plan only searches other files for these functions)."""
        amp = self.amp_names | self.every_local_amp_name
        return self.s.amp_local_calls | {f for f, names in self.local_call_names.items() if names & amp}

    # --- imports ------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name in AMP_MODULES and alias.asname:
                self._amp_scope().add(alias.asname)
            elif alias.name.split(".")[0] in ("apex", "apexcompat") and not alias.asname:
                self.apex_roots.add(alias.name.split(".")[0])
            local = alias.asname or alias.name.split(".")[0]
            self.s.imports[local] = (alias.name if alias.asname else local, "")
            self.s.import_lines.setdefault(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = _absolute(node, self.s.path)
        if module is None:
            return
        for alias in node.names:
            local = alias.asname or alias.name
            self.s.import_lines.setdefault(f"{module}.{alias.name}", node.lineno)
            if f"{module}.{alias.name}" in AMP_MODULES:
                self._amp_scope().add(local)
            elif module in AMP_MODULES:
                self.member_names[local] = alias.name
            elif alias.name != "*":
                self.s.imports[local] = (module, alias.name)
            else:
                self.s.star_imports.add(module)

    def _amp_scope(self) -> Set[str]:
        """Where an import of the amp module binds its name: the function being visited, else
        the module (as Python scopes it: ``from apex import amp`` in ``__init__`` is not seen by
        the class's other methods, and the rules do not take their ``amp`` for apex's)."""
        return self.local_amp_names[-1] if self.local_amp_names else self.amp_names

    def _is_amp(self, name: str) -> bool:
        if name in self.amp_names:
            return True
        for scope in self.local_amp_names:
            if name in scope:
                return True
        return False

    # --- definitions ----------------------------------------------------------------------

    def _visit_def(self, node: ast.AST, name: str, is_class: bool) -> None:
        if self.owner == MODULE_LEVEL:
            (self.s.classes if is_class else self.s.functions).add(name)
            self.s.def_lines.setdefault(name, getattr(node, "lineno", 0))
            if getattr(node, "decorator_list", None):
                self.s.escaping.add(name)
                self.s.decorators[name] = tuple(ast.unparse(d) for d in node.decorator_list)  # type: ignore[attr-defined]
            self.owner = name
            self.s.local_calls.setdefault(name, set())
            if isinstance(node, ast.FunctionDef):
                args = node.args
                self.s.function_params[name] = tuple(a.arg for a in args.posonlyargs + args.args)
            self.generic_visit(node)
            self.owner = MODULE_LEVEL
        else:
            self.s.bound_names.add(name)
            self.generic_visit(node)

    def _note_annotations(self, annotations: Iterable[Optional[ast.AST]]) -> None:
        """Keep the Names in ``annotations`` out of ``escaping``: an annotation hands no value on."""
        for annotation in annotations:
            if annotation is not None:
                self.annotation_names.update(n for n in ast.walk(annotation) if isinstance(n, ast.Name))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        arguments = node.args
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg, arguments.kwarg]
        self._note_annotations([a.annotation for a in every if a is not None] + [node.returns])
        under = self.table.under(node.args) if self.table is not None else ast.walk(node.args)
        parameters = [a.arg for a in under if isinstance(a, ast.arg)]
        self.s.identifiers.update(parameters)
        self.s.bound_names.update(parameters)
        outer, self.branches = self.branches, ()
        outer_guard, self.guard = self.guard, ""
        outer_none, self.none_names = self.none_names, ()
        self.local_amp_names.append(set())
        if self.owner == MODULE_LEVEL and node.name in self.flag_params:
            self.local_amp_names[-1].add(self.flag_params[node.name])  # its members apex.amp's
        self.local_amp_attributes.append(set())
        if self.owner in self.s.classes and not self.method:
            self.method = node.name
            self.method_params = [a.arg for a in node.args.posonlyargs + node.args.args]
            was_static = self.static
            self.static = was_static or any(_decorator_name(d) == "staticmethod" for d in node.decorator_list)
            if self.method_params:
                assert self.table is not None
                handed, supers = _self_uses(node, self.method_params[0], self.table)
                if handed:
                    self.s.self_handed.add((self.owner, node.name))
                if supers:
                    self.s.method_super_calls[(self.owner, node.name)] = supers
            self._visit_def(node, node.name, False)
            self.method = ""
            self.method_params = []
            self.static = was_static
        else:
            self._visit_def(node, node.name, False)
        self.every_local_amp_name |= self.local_amp_names.pop()
        self.local_amp_attributes.pop()
        self.branches = outer
        self.guard = outer_guard
        self.none_names = outer_none

    def _visit_chain(self, node: ast.If, chain: int, branch: int) -> None:
        """An ``if`` and its ``elif``/``else`` branches (``else: if`` alike: equally exclusive)."""
        self.visit(node.test)
        outer, outer_guard, outer_none = self.branches, self.guard, self.none_names
        for index, block in ((branch, node.body), (branch + 1, node.orelse)):
            none = none_in_block(node.test, block is node.body, block)
            self.none_names = outer_none + ((none,) if none else ())
            if block is node.orelse and len(block) == 1 and isinstance(block[0], ast.If):
                self._visit_chain(block[0], chain, branch + 1)
                continue
            self.guard = ast.unparse(node.test) if block is node.body else outer_guard
            self.branches = None if outer is None else outer + ((chain, index),)
            guard = self.main_guard
            self.main_guard = guard or (block is node.body and self.owner == MODULE_LEVEL and _is_main_guard(node.test))
            self.s.main_guard = self.s.main_guard or self.main_guard
            for stmt in block:
                self.visit(stmt)
            self.main_guard = guard
            self.branches = outer
        self.guard = outer_guard
        self.none_names = outer_none

    def visit_If(self, node: ast.If) -> None:
        self._visit_chain(node, id(node), 0)

    def _visit_loop(self, node: ast.AST) -> None:
        # a loop that only initializes is no loop for the scaler: it is made once, after it
        outer = self.branches
        if not initializes_only(node):
            self.branches = None
        self.generic_visit(node)
        self.branches = outer

    def visit_For(self, node: ast.AST) -> None:
        self._bind([node.target], None)  # type: ignore[attr-defined]
        self._visit_loop(node)

    def visit_With(self, node: ast.AST) -> None:
        self._bind([item.optional_vars for item in node.items if item.optional_vars is not None], None)  # type: ignore[attr-defined]
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind([node.target], None)
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]
    visit_AsyncWith = visit_With  # type: ignore[assignment]
    visit_While = _visit_loop  # type: ignore[assignment]

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.base_names.update(b for b in node.bases if isinstance(b, ast.Name))
        if self.owner == MODULE_LEVEL:
            self.s.plain_methods[node.name] = {
                stmt.name
                for stmt in node.body
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not any(_decorator_name(d) == "staticmethod" for d in stmt.decorator_list)
            }
            self.s.class_bases[node.name] = base_texts(node)
            decorated = {
                stmt.name
                for stmt in node.body
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                and any(_decorator_name(d) not in ("staticmethod", "classmethod") for d in stmt.decorator_list)
            }
            if decorated:
                self.s.decorated_methods[node.name] = decorated
            assert self.table is not None
            if not _init_chained(node, self.table):
                self.s.unchained_inits.add(node.name)
            self.s.class_members[node.name] = class_members(node)
            attr = wrapped_attribute(node)
            if attr is not None:
                self.s.optimizer_wrappers[node.name] = attr
            held = scaler_steppable_attribute(node)
            if held is not None:
                self.s.scaler_steppable[node.name] = held
            self._visit_def(node, node.name, True)
            return
        # a class nested in a definition: its methods' first parameter is no instance of ``owner``
        self.static, outer = True, self.static
        self._visit_def(node, node.name, True)
        self.static = outer

    # --- uses -----------------------------------------------------------------------------

    def _amp_member(self, func: ast.AST) -> Optional[str]:
        if isinstance(func, ast.Name):
            return self.member_names.get(func.id)
        if not isinstance(func, ast.Attribute):
            return None
        value = func.value
        if isinstance(value, ast.Name) and self._is_amp(value.id):
            return func.attr
        if self._amp_attribute(value):
            return func.attr
        if (
            isinstance(value, ast.Attribute)
            and value.attr == "amp"
            and isinstance(value.value, ast.Name)
            and value.value.id in self.apex_roots
        ):
            return func.attr
        return None

    def _amp_attribute(self, node: ast.AST) -> bool:
        """``node`` is ``self.<attr>`` that the function being visited stored the amp module on."""
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and bool(self.method_params)
            and node.value.id == self.method_params[0]
            and bool(self.local_amp_attributes)
            and node.attr in self.local_amp_attributes[-1]
        )

    def visit_Call(self, node: ast.Call) -> None:
        member = self._amp_member(node.func)
        if member is not None:
            optimizers = node.args[1] if len(node.args) >= 2 else next(
                (k.value for k in node.keywords if k.arg == "optimizers"), None
            )
            no_optimizers = optimizers is None or (
                isinstance(optimizers, ast.Constant) and optimizers.value is None
            ) or (isinstance(optimizers, (ast.List, ast.Tuple)) and not optimizers.elts) or (
                isinstance(optimizers, ast.Name) and optimizers.id in self.none_names
            )
            training = member == "init" or (member == "initialize" and not no_optimizers)
            position = 1 if member == "init" else 8
            scale = node.args[position] if len(node.args) > position else next(
                (k.value for k in node.keywords if k.arg == "loss_scale"), None
            )
            dynamic = not any(isinstance(a, ast.Starred) for a in node.args) and not any(
                k.arg is None for k in node.keywords
            ) and (scale is None or (isinstance(scale, ast.Constant) and scale.value == "dynamic"))
            losses = next((k.value for k in node.keywords if k.arg == "num_losses"), None)
            site = AmpSite(
                member,
                node.lineno,
                self.owner,
                training,
                method=self.method,
                branches=self.branches,
                dynamic=dynamic,
                num_losses=losses.value if isinstance(losses, ast.Constant) and type(losses.value) is int else 1,
                losses_at_run_time=losses is None and any(k.arg is None for k in node.keywords),
                guard=self.guard,
            )
            if isinstance(optimizers, ast.Attribute) and isinstance(optimizers.value, ast.Name):
                site.optimizer_text = f"{optimizers.value.id}.{optimizers.attr}"
            if self.method_params:
                site.receiver = self.method_params[0]
                given = node.args[1] if len(node.args) >= 2 else None
                if (
                    isinstance(given, ast.Attribute)
                    and isinstance(given.value, ast.Name)
                    and given.value.id == site.receiver
                ):
                    site.optimizer_attr = given.attr
            loss = node.args[0] if node.args else None
            if member == "scale_loss":
                given = node.args[1] if len(node.args) >= 2 else None
                loss_id = node.args[2] if len(node.args) >= 3 else next(
                    (k.value for k in node.keywords if k.arg == "loss_id"), None
                )
                site.optimizer_name = given.id if isinstance(given, ast.Name) else ""
                site.loss_id_name = loss_id.id if isinstance(loss_id, ast.Name) else ""
                site.optimizer_attrs = _receiver_attrs(given, site.receiver)
            if member == "scale_loss" and isinstance(loss, ast.Name) and loss.id in self.method_params[1:]:
                site.loss_param, site.loss_name = self.method_params.index(loss.id), loss.id
            if (
                member == "scale_loss"
                and not self.method
                and isinstance(loss, ast.Name)
                and loss.id in self.s.function_params.get(self.owner, ())
            ):
                site.loss_argument = loss.id
            self.s.amp_sites.append(site)
        self._amp_arguments(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "scale_loss"
            and isinstance(func.value, ast.Name)
            and not self._is_amp(func.value.id)
        ):
            self.name_scales.append((func.value.id, self.owner, self.method, node.lineno))
        if self.method and isinstance(func, ast.Attribute) and func.attr in ("backward", "step", "scale_loss"):
            self.s.stepping_methods.add((self.owner, self.method))
        if not self.method and isinstance(func, ast.Attribute) and func.attr == "step":
            self.s.stepping_definitions.add(self.owner)
        if (
            self.method_params
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == self.method_params[0]
        ):
            self.s.self_calls.add((self.owner, func.attr))
            self.s.method_self_calls.setdefault((self.owner, self.method), set()).add(func.attr)
        if (
            self.method_params
            and isinstance(func, ast.Attribute)
            and func.attr == "step"
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.value.value.id == self.method_params[0]
        ):
            self.s.self_steps.add(func.value.attr)
            self.s.method_steps.setdefault((self.owner, self.method), set()).add(func.value.attr)
        if self.method and isinstance(func, ast.Name) and func.id in GRADIENT_READS:
            self.s.gradient_methods.add((self.owner, self.method))
        guarded = self.main_guard and self.owner == MODULE_LEVEL
        if isinstance(func, ast.Name):
            self.s.called_names.add(func.id)
            if func.id in self.s.imports and self.s.imports[func.id][1]:
                module, name = self.s.imports[func.id]
                self.s.calls.append(CallSite(func.id, module, name, node.lineno, self.owner, self.method, guarded))
            else:
                self.s.plain_calls.append(CallSite(func.id, "", func.id, node.lineno, self.owner, self.method, guarded))
                if self.owner != MODULE_LEVEL:
                    self.s.local_calls[self.owner].add(func.id)
                elif not guarded:
                    self.s.module_calls.add(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            imported = self.s.imports.get(func.value.id)
            if imported is not None and not imported[1]:
                text = f"{func.value.id}.{func.attr}"
                self.s.calls.append(
                    CallSite(text, imported[0], func.attr, node.lineno, self.owner, self.method, guarded)
                )
            elif imported is not None:
                module = f"{imported[0]}.{imported[1]}"
                self.s.submodule_calls.append(
                    CallSite(f"{func.value.id}.{func.attr}", module, func.attr, node.lineno, self.owner, self.method,
                             guarded)
                )
            elif not self._is_amp(func.value.id):
                on_self = bool(self.method_params) and func.value.id == self.method_params[0] and not self.static
                self.s.method_calls.append(MethodCall(func.value.id, func.attr, node.lineno, self.owner, on_self))
        if isinstance(func, ast.Attribute) and node.args + node.keywords and not self._module_member(func):
            self.s.attribute_calls.setdefault(func.attr, []).append(_filled_slots(node))
        if isinstance(func, ast.Name) and func.id == "super" and node.args and isinstance(node.args[0], ast.Name):
            self.super_args.add(node.args[0])
        # the callee itself is visited as a call, not as an escaping reference
        for argument in node.args:
            self.visit(argument)
        for keyword in node.keywords:
            self.visit(keyword)
        if not isinstance(func, ast.Name):
            self.callees.add(func)
            self.visit(func)

    def _bind(self, targets: Sequence[ast.AST], value: Optional[ast.AST]) -> None:
        """What each plain name among ``targets`` is bound to (``bindings``)."""
        models: Sequence[ast.AST] = ()
        if isinstance(value, ast.Call) and self._amp_member(value.func) == "initialize" and value.args:
            first = value.args[0]
            models = first.elts if isinstance(first, (ast.List, ast.Tuple)) else [first]
        for target in targets:
            if isinstance(target, ast.Name):
                kind = _constructed(value) or self._torch_wrapper(value) or OTHER
                self.s.bindings.setdefault((self.owner, target.id), []).append(kind)
            elif isinstance(target, (ast.Tuple, ast.List)):
                returned = _returned_models(target, value, models)
                for index, item in enumerate(target.elts):
                    if isinstance(item, ast.Name):
                        same = models and index == 0 and _same_names(item, models)
                        self.s.bindings.setdefault((self.owner, item.id), []).append(SAME_OBJECT if same else OTHER)
                    elif index == 0 and returned:
                        # ``[a, b], opt = amp.initialize([a, b], opt)``: each model to its own name
                        for name in returned:
                            self.s.bindings.setdefault((self.owner, name), []).append(SAME_OBJECT)
                    else:
                        self._bind([item], None)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and node.target.id == "__all__":
            self.s.all_dynamic = True
        self._note_annotations([node.annotation])
        self._bind([node.target], node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name) and node.target.id == "__all__":
            self.s.all_dynamic = True
        self._bind([node.target], None)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            self._dunder_all(node)
        self._bind(node.targets, node.value)
        value = node.value
        if isinstance(value, ast.Name):
            denoted = self.s.imports.get(value.id)
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            denoted = (self.s.imports.get(value.value.id, ("", ""))[0], value.attr)
        else:
            denoted = None
        if denoted in NOOP_CONTEXTS:
            self.s.noop_contexts.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(value, ast.Name) and self._is_amp(value.id):
            self.s.amp_stores.update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
            if self.local_amp_attributes and self.method_params and not self.static:
                self.local_amp_attributes[-1].update(
                    t.attr for t in node.targets
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                    and t.value.id == self.method_params[0]
                )
        self.generic_visit(node)

    def _bound(self, name: Optional[str]) -> None:
        """``name`` bound by an assignment-like statement of the scope being visited."""
        if name:
            self.s.bound_names.add(name)
            if self.owner == MODULE_LEVEL:
                self.s.module_bound.add(name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bound(node.name)
        for stmt in node.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and self._is_amp(stmt.targets[0].id)
                and isinstance(stmt.value, ast.Constant)
                and stmt.value.value is None
            ):
                self.s.amp_unset.append(stmt.lineno)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.s.bound_names.add(name)
            self.s.module_bound.add(name)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and node.value.id == "__all__":
            self.s.all_dynamic = True
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.AST) -> None:
        self._bound(getattr(node, "name", None))
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs  # type: ignore[assignment]

    def visit_MatchMapping(self, node: ast.AST) -> None:
        self._bound(getattr(node, "rest", None))
        self.generic_visit(node)

    def _dunder_all(self, node: ast.AST) -> None:
        """A module-level binding of ``__all__``: static once, as a list or tuple of strings."""
        value = node.value if isinstance(node, ast.Assign) else None
        names = (
            [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if isinstance(value, (ast.List, ast.Tuple))
            else None
        )
        if self.owner != MODULE_LEVEL or self.s.all_names is not None or names is None or len(names) != len(value.elts):
            self.s.all_dynamic = True
        else:
            self.s.all_names = tuple(names)

    def visit_Name(self, node: ast.Name) -> None:
        self.s.identifiers.add(node.id)
        if not isinstance(node.ctx, ast.Load):
            self._bound(node.id)
            self.all_stores += node.id == "__all__"
        if self._is_amp(node.id):
            self.s.amp_values.append(node.lineno)
        elif isinstance(node.ctx, ast.Load) and node in self.super_args:
            self.s.super_named.add(node.id)
        elif isinstance(node.ctx, ast.Load) and node not in self.annotation_names:
            self.s.escaping.add(node.id)
            if node not in self.base_names:
                self.s.valued.add(node.id)

    def _module_member(self, node: ast.Attribute) -> bool:
        """``tf.train``, ``lgb.train(...)``: read off a module this file imports (``import m``)."""
        value = node.value
        return isinstance(value, ast.Name) and value.id in self.s.imports and not self.s.imports[value.id][1]

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.s.attribute_names.add(node.attr)
        if self.method and node.attr in GRADIENT_READS:
            self.s.gradient_methods.add((self.owner, self.method))
        if isinstance(node.value, ast.Name) and node.value.id == "__all__":
            self.s.all_dynamic = True  # ``__all__.extend(...)``, ``__all__ += ...`` alike
        if isinstance(node.ctx, ast.Load) and node not in self.callees and not self._module_member(node):
            self.s.attribute_values.add(node.attr)
        if isinstance(node.ctx, ast.Load) and not (
            isinstance(node.value, ast.Name) and self.s.imports.get(node.value.id) == ("apex", "")
        ):
            self.s.loaded_attributes.add(node.attr)
            self.s.definition_attributes.setdefault(self.owner, set()).add(node.attr)
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in self.s.imports):
                self.s.object_attributes.add(node.attr)
                if node.attr == "grad":
                    self.s.grad_readers.add(self.owner)
            else:
                self.s.imported_attributes.add(node.attr)
        if isinstance(node.value, ast.Name) and self._is_amp(node.value.id):
            self.s.identifiers.add(node.value.id)
            return  # amp.<member>: a member use, not amp as a value
        if node.attr == "scale_loss":
            self.attribute_scales.append((self.owner, node.value.id if isinstance(node.value, ast.Name) else ""))
        if isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            # ``GAN.LATENT``, ``GAN.real_batch(...)``: read through the name, which the plan
            # counts as handing the name away only when a plain method is read so
            self.s.identifiers.add(node.value.id)
            self.s.attribute_reads.setdefault(node.value.id, set()).add(node.attr)
            self.s.name_attributes.setdefault(self.owner, set()).add((node.value.id, node.attr))
            return
        self.generic_visit(node)

    def _amp_arguments(self, node: ast.Call) -> None:
        """``helper(..., amp=amp)``: ``amp`` itself (or ``apex.amp``) given to a call of an
        imported function, or of a method on a plain local name (``state.keep(amp)``)."""
        func = node.func
        receiver = ""
        if isinstance(func, ast.Name) and self.s.imports.get(func.id, ("", ""))[1]:
            module, name = self.s.imports[func.id]
            text = func.id
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id not in self.s.imports
            and not self._is_amp(func.value.id)
        ):
            module, name, receiver = "", func.attr, func.value.id
            text = f"{receiver}.{name}"
        elif isinstance(func, ast.Name) and func.id == "dict" and func.id not in self.s.imports:
            # ``dict(amp=amp)``: where it goes is read once the file is (``dict_spreads``)
            module, name, text = "", "dict", "dict"
            if any(self._is_amp_value(k.value) for k in node.keywords):
                self.s.amp_local_calls.add(func.id)
        elif isinstance(func, ast.Name) and func.id not in self.s.imports and not self._is_amp(func.id):
            values = list(node.args) + [k.value for k in node.keywords]
            if any(self._is_amp_value(v) for v in values):
                self.s.amp_local_calls.add(func.id)
            # a name some other scope binds to amp (``global amp`` in a setup function): decided
            # once every scope has been read (``amp_local_calls``)
            self.local_call_names.setdefault(func.id, set()).update(v.id for v in values if isinstance(v, ast.Name))
            return
        else:
            return
        passed = [(k.arg, -1, k.value) for k in node.keywords if k.arg] + [
            ("", i, a) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)
        ]
        for keyword, position, value in passed:
            if self._is_amp_value(value) or self._is_amp_or_none(value):
                self.s.amp_arguments.append(
                    AmpArgument(text, module, name, keyword, position, node.lineno, self.owner, receiver)
                )

    def _torch_wrapper(self, value: Optional[ast.AST]) -> Optional[str]:
        """``nn.parallel.DistributedDataParallel(model, ...)``: the wrapper's full name, for a
        call of one of ``TORCH_WRAPPERS`` through a dotted path off an imported name."""
        parts: List[str] = []
        func = value.func if isinstance(value, ast.Call) else None
        while isinstance(func, ast.Attribute):
            parts.insert(0, func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id not in self.s.imports or not parts:
            return None
        module, name = self.s.imports[func.id]
        full = ".".join([module] + ([name] if name else []) + parts)
        return full if full in TORCH_WRAPPERS else None

    def _is_amp_or_none(self, value: ast.AST) -> bool:
        """``amp if use_amp else None`` (either way round): apex.amp on one path, nothing on
        the other."""
        if not isinstance(value, ast.IfExp):
            return False
        branches = (value.body, value.orelse)
        nones = [b for b in branches if isinstance(b, ast.Constant) and b.value is None]
        return len(nones) == 1 and any(self._is_amp_value(b) for b in branches)

    def _is_amp_value(self, value: ast.AST) -> bool:
        """``amp`` (a name of the amp module) or ``apex.amp`` itself."""
        if isinstance(value, ast.Name):
            return self._is_amp(value.id)
        return (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and f"{self.s.imports.get(value.value.id, ('', ''))[0]}.{value.attr}" in AMP_MODULES
            and not self.s.imports[value.value.id][1]
        )


def import_reader(summary: ModuleSummary) -> _Reader:
    """A reader of ``summary``'s file whose import visitors fill ``summary.imports`` and
    ``summary.star_imports`` as the whole walk does (``import_heads``)."""
    return _Reader(summary)


def _constructed(value: Optional[ast.AST]) -> Optional[str]:
    """``C(...)`` or ``C(...).to(device)``: the name ``C``; ``C.load(...)``: ``C.load`` (an
    instance of ``C`` when ``load`` is one of its ``class_factories``)."""
    while (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in RETURNS_SELF
    ):
        value = value.func.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name):
        return f"{value.func.value.id}.{value.func.attr}"
    return None


def _filled_slots(call: ast.Call) -> Tuple[int, Tuple[str, ...], bool]:
    """How ``call`` fills its callee's parameters (``attribute_calls``)."""
    starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    named = tuple(k.arg for k in call.keywords if k.arg is not None)
    return len(call.args), named, starred


def _returned_models(target: ast.AST, value: Optional[ast.AST], models: Sequence[ast.AST]) -> Tuple[str, ...]:
    """``[a, b], opt = amp.initialize([a, b], opt)``: the names ``a, b``, the models given
    back in the order given (apex returns the list of models first when optimizers are
    given); empty for any other shape."""
    if not isinstance(value, ast.Call) or len(models) < 2 or not isinstance(target, (ast.Tuple, ast.List)):
        return ()
    given = value.args[1] if len(value.args) > 1 else next(
        (k.value for k in value.keywords if k.arg == "optimizers"), None)
    if given is None or (isinstance(given, ast.Constant) and given.value is None) or len(target.elts) != 2:
        return ()
    first, wanted = target.elts[0], _names_of(models)
    if not isinstance(first, (ast.Tuple, ast.List)) or not wanted or _names_of(first.elts) != wanted:
        return ()
    return wanted


def _names_of(nodes: Sequence[ast.AST]) -> Tuple[str, ...]:
    """The ids of ``nodes`` when every one is a plain name, else empty."""
    return tuple(n.id for n in nodes) if all(isinstance(n, ast.Name) for n in nodes) else ()  # type: ignore[attr-defined]


def _same_names(item: ast.Name, models: Sequence[ast.AST]) -> bool:
    """``model, opt = amp.initialize(model, ...)``: the one model comes back to its own name."""
    return len(models) == 1 and isinstance(models[0], ast.Name) and models[0].id == item.id


def _self_uses(method: ast.AST, me: str, table: NodeTable) -> Tuple[bool, Set[str]]:
    """Whether ``method`` uses its first parameter ``me`` other than as ``me.x`` or in
    ``super(C, me)`` (anywhere in its body, nested functions included), and the methods it
    calls through ``super()`` (``table``: the nodes of its file)."""
    parents = table.parents
    handed, supers = False, set()
    for statement in getattr(method, "body", []):
        for node in table.under(statement):
            if isinstance(node, ast.Name):
                if node.id != me:
                    continue
                parent = parents.get(node)
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    continue
                if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "super":
                    continue
                handed = True
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Name)
                and node.func.value.func.id == "super"
            ):
                supers.add(node.func.attr)
    return handed, supers


def _init_chained(cls: ast.ClassDef, table: NodeTable) -> bool:
    """Whether ``cls`` has no ``__init__`` of its own, or one that calls a base's
    (``super().__init__(...)``, ``Base.__init__(self, ...)``)."""
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return True
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
        for n in table.under(init)
    )


def _decorator_name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def parent_links(node: ast.AST) -> Dict[ast.AST, ast.AST]:
    """Each node under ``node`` -> its parent."""
    return NodeTable(node).parents


def _use_kind(node: ast.expr, parents: Dict[ast.AST, ast.AST]) -> str:
    """How the expression ``node`` (a parameter, ``self.amp``) is used: ``x.state_dict()``,
    ``x.load_state_dict(y)``, ``x.master_params(opt)``, ``with x.scale_loss(...) as y``
    ("scale_loss"), a test of whether anything was passed (``x is None``, ``if x``:
    "none_check"), else "other" (passed on, stored, reassigned, another member)."""
    if not isinstance(getattr(node, "ctx", None), ast.Load):
        return "other"
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        call = parents.get(parent)
        wanted = {"state_dict": 0, "load_state_dict": 1, "master_params": 1}.get(parent.attr)
        if (
            isinstance(call, ast.Call)
            and call.func is parent
            and len(call.args) == wanted
            and not call.keywords
            and not any(isinstance(a, ast.Starred) for a in call.args)
        ):
            return parent.attr
        if parent.attr == "scale_loss" and isinstance(call, ast.Call) and call.func is parent:
            return "scale_loss"
        if _refused_load(parent.attr, call, parent):
            return "type_error"
        return "other"
    if isinstance(parent, ast.Compare):
        none = (
            parent.left is node
            and len(parent.ops) == 1
            and isinstance(parent.ops[0], (ast.Is, ast.IsNot))
            and isinstance(parent.comparators[0], ast.Constant)
            and parent.comparators[0].value is None
        )
        return "none_check" if none else "other"
    if (
        isinstance(parent, ast.BoolOp)
        or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not))
        or (isinstance(parent, (ast.If, ast.IfExp, ast.While)) and parent.test is node)
    ):
        return "none_check"
    return "other"


def _refused_load(attr: str, call: Optional[ast.AST], func: ast.AST) -> bool:
    """``x.load_state_dict(state, strict=False)``: a call that apex.amp's ``load_state_dict``
    (which takes the state alone) refuses with TypeError before doing anything."""
    return (
        attr == "load_state_dict"
        and isinstance(call, ast.Call)
        and call.func is func
        and len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and bool(call.keywords)
        and all(k.arg not in (None, "state_dict") for k in call.keywords)
    )


def _loop_value_uses(name: ast.Name, func: ast.AST, table: NodeTable) -> Set[str]:
    """How ``func`` uses the values of its ``**kwargs`` (the Name ``name``): only through
    ``for key, value in kwargs.items()`` / ``for value in kwargs.values()``, each loop value
    used as ``_use_kind`` says inside its loop and nowhere else; else {"other"}."""
    parents = table.parents
    attr = parents.get(name)
    call = parents.get(attr) if attr is not None else None
    loop = parents.get(call) if call is not None else None
    if not (
        isinstance(attr, ast.Attribute)
        and attr.attr in ("items", "values")
        and isinstance(call, ast.Call)
        and call.func is attr
        and not call.args
        and not call.keywords
        and isinstance(loop, ast.For)
        and loop.iter is call
    ):
        return {"other"}
    target = loop.target
    if attr.attr == "items":
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return {"other"}
        target = target.elts[1]
    if not isinstance(target, ast.Name):
        return {"other"}
    inside = {id(n) for stmt in loop.body for n in table.under(stmt)}
    uses: Set[str] = set()
    for node in table.under(func):
        if isinstance(node, ast.Name) and node.id == target.id and node is not target:
            uses.add(_use_kind(node, parents) if id(node) in inside else "other")
    return uses


def _factories(cls: ast.ClassDef, table: NodeTable) -> Set[str]:
    """The class methods of ``cls`` every ``return`` of which builds ``cls(...)`` (its first
    parameter called), with at least one such return."""
    found = set()
    for method in cls.body:
        if not (
            isinstance(method, ast.FunctionDef)
            and any(_decorator_name(d) == "classmethod" for d in method.decorator_list)
            and method.args.args
        ):
            continue
        me = method.args.args[0].arg
        returns = [n for n in table.under(method) if isinstance(n, ast.Return)]
        if returns and all(
            isinstance(r.value, ast.Call) and isinstance(r.value.func, ast.Name) and r.value.func.id == me
            for r in returns
        ):
            found.add(method.name)
    return found


def _parameter_uses(
    func: ast.AST,
    table: NodeTable,
    kept: Optional[ast.ClassDef] = None,
    class_uses: Optional[Dict[ast.ClassDef, Dict[str, Set[str]]]] = None,
) -> Dict[str, Set[str]]:
    """How ``func``'s body uses each of its parameters (``_use_kind``; ``table`` holds every
    node of the file).  For the ``__init__`` of ``kept``, ``self.amp = amp``
    keeps the parameter: then the uses of ``self.amp`` in every method of the class count,
    as ``stored`` plus theirs (``_attribute_uses`` of ``kept``, kept in ``class_uses`` for
    the class's other methods)."""
    if class_uses is None:
        class_uses = {}
    args = func.args  # type: ignore[attr-defined]
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    me = args.args[0].arg if kept is not None and args.args else None
    uses: Dict[str, Set[str]] = {name: set() for name in names}
    catchall = args.kwarg.arg if args.kwarg is not None else None
    if catchall is not None:
        uses[VAR_KEYWORD] = set()
    parents = table.parents
    for node in table.under(func):
        if catchall is not None and isinstance(node, ast.Name) and node.id == catchall:
            kept_as = _kept_mapping(node, parents, me) if kept is not None else None
            if kept_as is not None:  # ``self.extra = copy.copy(kwargs)``: its values' uses in the class
                uses[VAR_KEYWORD] |= _kept_values_uses(kept, kept_as, table)  # type: ignore[arg-type]
            else:
                uses[VAR_KEYWORD] |= _loop_value_uses(node, func, table)
            continue
        if not (isinstance(node, ast.Name) and node.id in names):
            continue
        parent = parents.get(node)
        if (
            kept is not None
            and isinstance(parent, ast.Assign)
            and parent.value is node
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Attribute)
            and isinstance(parent.targets[0].value, ast.Name)
            and parent.targets[0].value.id == me
        ):
            if kept not in class_uses:
                class_uses[kept] = _attribute_uses(kept, table)
            uses[node.id] |= {"stored"} | class_uses[kept].get(parent.targets[0].attr, {"other"})
        else:
            uses[node.id].add(_use_kind(node, parents))
    return uses


def _kept_mapping(name: ast.Name, parents: Dict[ast.AST, ast.AST], me: Optional[str]) -> Optional[str]:
    """``self.x = kwargs`` / ``self.x = copy.copy(kwargs)`` / ``self.x = dict(kwargs)``: ``x``."""
    value: ast.AST = name
    call = parents.get(name)
    if (
        isinstance(call, ast.Call)
        and call.args == [name]
        and not call.keywords
        and ast.unparse(call.func) in ("copy.copy", "copy", "dict")
    ):
        value = call
    stmt = parents.get(value)
    if (
        isinstance(stmt, ast.Assign)
        and stmt.value is value
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Attribute)
        and isinstance(stmt.targets[0].value, ast.Name)
        and stmt.targets[0].value.id == me
    ):
        return stmt.targets[0].attr
    return None


def _kept_values_uses(cls: ast.ClassDef, attr: str, table: NodeTable) -> Set[str]:
    """How the methods of ``cls`` use the values of the mapping it keeps as ``self.<attr>``
    (stored once): ``for key, value in self.x.items()`` loops, ``value = self.x[key]`` and
    ``self.x[key].<member>(...)`` count as ``_use_kind`` says; keys alone (``key in self.x``,
    ``for key in self.x``) use no value; anything else is "other"."""
    uses: Set[str] = set()
    stores = 0
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in table.under(method):
            if not (isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name)):
                continue
            if isinstance(node.ctx, ast.Store):
                stores += 1
                continue
            uses |= _mapping_use(node, method, table)
    return uses if stores == 1 else uses | {"other"}


def _mapping_use(node: ast.Attribute, method: ast.AST, table: NodeTable) -> Set[str]:
    parents = table.parents
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr in ("items", "values"):
        return _loop_value_uses(node, method, table)  # type: ignore[arg-type]
    if isinstance(parent, ast.Attribute) and parent.attr == "keys":
        return set()
    if isinstance(parent, ast.Compare) and node in parent.comparators and all(
        isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops
    ):
        return set()
    loop = parents.get(parent) if isinstance(parent, ast.IfExp) and parent.test is not node else parent
    if isinstance(loop, ast.For) and loop.iter in (node, parent):
        return set()
    if isinstance(parent, ast.Subscript) and parent.value is node:
        stmt = parents.get(parent)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            local = stmt.targets[0].id
            found: Set[str] = set()
            for use in table.under(method):
                if isinstance(use, ast.Name) and use.id == local:
                    if isinstance(use.ctx, ast.Store) and use is not stmt.targets[0]:
                        return {"other"}
                    if not isinstance(use.ctx, ast.Store):
                        found.add(_use_kind(use, parents))
            return found
        return {_use_kind(parent, parents)}
    return {"other"}


def _attribute_uses(cls: ast.ClassDef, table: NodeTable) -> Dict[str, Set[str]]:
    """For each attribute ``x`` stored exactly once in ``cls`` as ``<name>.x = ...``, how the
    methods of ``cls`` use it otherwise (an attribute stored more often counts "other")."""
    kinds: Dict[str, Set[str]] = {}
    stores: Dict[str, int] = {}
    parents = table.parents
    for node in table.under(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if isinstance(node.ctx, ast.Store):
                stores[node.attr] = stores.get(node.attr, 0) + 1
            else:
                kinds.setdefault(node.attr, set()).add(_use_kind(node, parents))
    return {attr: kinds.get(attr, set()) | (set() if count == 1 else {"other"}) for attr, count in stores.items()}


def _functions(table: NodeTable, summary: ModuleSummary) -> None:
    """The parameters of the file's top-level functions (and of its classes' ``__init__``,
    under the class name, ``self`` left out) and how each is used."""
    tree = table.nodes[0]
    assert isinstance(tree, ast.Module)
    class_uses: Dict[ast.ClassDef, Dict[str, Set[str]]] = {}
    for stmt in tree.body:
        func: Optional[ast.AST] = None
        kept = None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = stmt
        elif isinstance(stmt, ast.ClassDef):
            func = next((m for m in stmt.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
            kept = stmt
            _methods(stmt, summary, table, class_uses)
        if func is None:
            continue
        args = func.args  # type: ignore[attr-defined]
        positional = tuple(a.arg for a in args.posonlyargs + args.args)[1 if kept is not None else 0 :]
        summary.parameters[stmt.name] = (positional, tuple(a.arg for a in args.kwonlyargs))  # type: ignore[attr-defined]
        summary.parameter_uses[stmt.name] = _parameter_uses(func, table, kept, class_uses)  # type: ignore[attr-defined]


def _methods(
    cls: ast.ClassDef,
    summary: ModuleSummary,
    table: NodeTable,
    class_uses: Dict[ast.ClassDef, Dict[str, Set[str]]],
) -> None:
    """The parameters of the plain methods ``cls`` defines and how each uses them, and its
    class methods that build an instance (``class_factories``)."""
    summary.class_factories[cls.name] = _factories(cls, table)
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef) or method.decorator_list or not method.args.args:
            continue
        args = method.args
        positional = tuple(a.arg for a in args.posonlyargs + args.args)[1:]
        summary.method_parameters[(cls.name, method.name)] = (positional, tuple(a.arg for a in args.kwonlyargs))
        summary.method_parameter_uses[(cls.name, method.name)] = _parameter_uses(method, table, cls, class_uses)


#: the tokens that hold a name or a string's text (an f-string's text is a token of its own
#: from Python 3.12)
_NAMES_AND_STRINGS = frozenset(
    {tokenize.NAME, tokenize.STRING} | ({tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE") else set())
)


def scale_loss_mentions(source: bytes) -> Optional[int]:
    """How many names and strings of the code of ``source`` hold ``scale_loss`` (None when
    it cannot be tokenized)."""
    word = SCALE_LOSS_TEXT.decode()
    try:
        return sum(
            1
            for token in tokenize.tokenize(io.BytesIO(source).readline)
            if token.type in _NAMES_AND_STRINGS and word in token.string
        )
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return None


def names_scale_loss(source: bytes) -> bool:
    """Whether the code of ``source`` (not its comments) names ``scale_loss``, as a name,
    an attribute or inside a string (``getattr(amp, "scale_loss")``); True when it cannot
    be read, so that nothing is taken as unscaled on a guess."""
    at = source.find(SCALE_LOSS_TEXT)
    if at < 0:
        return False
    while at >= 0:
        if b"#" not in source[source.rfind(b"\n", 0, at) + 1 : at]:
            return True  # no comment holds it: it is in a name or a string (tokenizing is slow)
        at = source.find(SCALE_LOSS_TEXT, at + 1)
    word = SCALE_LOSS_TEXT.decode()
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            if token.type in _NAMES_AND_STRINGS and word in token.string:
                return True
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return True
    return False


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides
    )


def _receiver_attrs(given: Optional[ast.AST], receiver: str) -> Tuple[str, ...]:
    """``self.a`` or ``[self.a, self.b]`` (``receiver`` being ``self``): ("a", "b"); else ()."""
    items = given.elts if isinstance(given, (ast.List, ast.Tuple)) else [given]
    attrs = tuple(
        i.attr
        for i in items
        if isinstance(i, ast.Attribute) and isinstance(i.value, ast.Name) and i.value.id == receiver
    )
    return attrs if receiver and len(attrs) == len(items) else ()


def summarise(path: str, shown: str, source: bytes) -> Optional[ModuleSummary]:
    """The summary of one file, or None when the stdlib parser rejects it (the engine
    reports that file's parse error itself)."""
    tree = stdlib_trees.parse(source)
    if tree is None:
        return None
    summary = ModuleSummary(path, shown, scale_loss_named=names_scale_loss(source))
    table = NodeTable(tree)
    reader = _Reader(summary, table)
    if b"from apex import" in source and b".init" in source:
        reader.flag_params = flag_parameters(table)
    reader.visit(tree)
    summary.amp_local_calls = reader.amp_local_calls()
    _functions(table, summary)
    summary.framework = read_framework_facts(tree, summary.imports)
    if any(marker in source for marker in RUNTIME_IMPORT_MARKERS):
        summary.runtime_builds = runtime_builds(tree)
    summary.object_builds = read_object_builds(table)
    if summary.training_inits:
        summary.function_facts = read_function_facts(table)
    if any(a.text == "dict" for a in summary.amp_arguments):
        summary.dict_spreads = read_dict_spreads(table)
    summary.handed_calls = handed_calls(table)
    if b"ArgumentParser" in source:
        summary.parser_factories = parser_factories(tree)
    # a class named only in ``super(Class, self)`` is handed to nobody; the plan still counts
    # it as escaping, only the reasons tell the two apart
    summary.super_only = summary.super_named - summary.escaping
    summary.escaping |= summary.super_named
    # bound nowhere at all (a first run removed the function's unused apex.amp import): the
    # same NameError, and the same answer on a second run
    nowhere = summary.bound_names | summary.module_bound | set(summary.imports) | summary.functions | summary.classes
    unbound = [
        (name, owner, method, line)
        for name, owner, method, line in reader.name_scales
        if name not in reader.amp_names
        and (
            name in reader.every_local_amp_name
            or (name not in nowhere and not summary.star_imports and not hasattr(builtins, name))
        )
    ]
    summary.unbound_scales = [(owner, method, line) for _name, owner, method, line in unbound]
    summary.module_amp_names = set(reader.amp_names)
    summary.held = read_held_facts(table, summary.module_amp_names)
    if reader.attribute_scales:
        failing = {name for name, *_rest in unbound} - summary.module_bound  # no ``global amp``
        summary.unbound_names = failing
        summary.scale_loss_owners = {owner for owner, receiver in reader.attribute_scales if receiver not in failing}
        sites = sum(1 for site in summary.amp_sites if site.member == "scale_loss")
        summary.scale_loss_placed = scale_loss_mentions(source) == sites + len(reader.attribute_scales)
    if reader.all_stores != (1 if summary.all_names is not None else 0):
        summary.all_dynamic = True
    # a name no statement of the file binds may come from a star import (``star_imports``)
    unbound = summary.identifiers - summary.bound_names if summary.star_imports else set()
    summary.escaping &= summary.functions | summary.classes | set(summary.imports) | unbound
    summary.module_calls &= summary.functions | summary.classes
    return summary


class ModuleResolver:
    """Maps dotted module names to the indexed files, the way Python would find them when
    the script's directory, the repository roots and their ``src/`` folders are on the
    path (the common layouts: scripts beside their modules, ``tools/train.py`` importing the
    package at the root, ``src/`` packages)."""

    def __init__(self, paths: Iterable[str], roots: Sequence[str]) -> None:
        self.files = {os.path.abspath(p) for p in paths}
        self.roots = [os.path.abspath(r if os.path.isdir(r) else os.path.dirname(r) or ".") for r in roots]
        #: (module, importer) -> its candidates: the plan asks the same questions many times
        self._found: Dict[Tuple[str, str], List[str]] = {}

    def _search_dirs(self, importer: str) -> List[str]:
        dirs = [os.path.dirname(os.path.abspath(importer))]
        for root in self.roots:
            dirs += [root, os.path.join(root, "src")]
        directory = dirs[0]
        while any(directory.startswith(r + os.sep) for r in self.roots):
            directory = os.path.dirname(directory)
            dirs.append(directory)
        return list(dict.fromkeys(dirs))

    def resolve(self, module: str, importer: str) -> Optional[str]:
        """The indexed file ``module`` denotes for ``importer``, or None (not in the
        repository, not indexed, or ambiguous)."""
        found = self.candidates(module, importer)
        return found[0] if len(found) == 1 else None

    def candidates(self, module: str, importer: str) -> List[str]:
        """Every indexed file ``module`` may denote for ``importer`` (several: which one an
        import finds depends on ``sys.path``)."""
        if not module:
            return []
        key = (module, importer)
        if key not in self._found:
            self._found[key] = self._candidates(module, importer)
        return list(self._found[key])

    def _candidates(self, module: str, importer: str) -> List[str]:
        relative = module.replace(".", os.sep)
        found = []
        for directory in self._search_dirs(importer):
            for candidate in (relative + ".py", os.path.join(relative, "__init__.py")):
                path = os.path.join(directory, candidate)
                if path in self.files:
                    found.append(path)
        return list(dict.fromkeys(found))
