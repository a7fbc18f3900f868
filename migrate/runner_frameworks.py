"""Training frameworks whose runner object carries the optimizer to the hooks (mmcv): the
facts the cross-file plan relies on, as a small table, and the per-file reading of them.

Under such a framework nothing in the repository calls the code that scales the losses: the
launcher builds a *runner* through the framework (``build_runner(cfg, default_args=dict(
model=model, optimizer=optimizer))``), the framework calls every registered hook with that
runner (``hook.after_train_iter(runner)``) and the runner's own methods (``save_checkpoint``,
``resume``).  What carries the optimizer there can carry the GradScaler too: the launcher sets
``runner.<CARRIER_ATTRIBUTE> = scaler`` right after building it, a hook reads it from the
runner it is given, a runner subclass from ``self``.

Only stdlib ``ast`` here: the repository index calls :func:`read_framework_facts` on every
file it summarises.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

#: the attribute of the runner the launcher puts the GradScaler on
CARRIER_ATTRIBUTE = "grad_scaler"


@dataclass(frozen=True)
class RunnerFramework:
    """What a framework guarantees about its runner and hooks (see the module docstring)."""

    name: str
    #: top-level package its names are imported from
    package: str
    #: calls that build a runner from a config: the optimizer is given as
    #: ``<builder>(cfg, <keyword>=dict(optimizer=...))``
    builders: Tuple[str, ...]
    builder_keyword: str
    #: framework classes a repository's runner subclasses (its methods find the runner on self)
    runner_bases: Tuple[str, ...]
    #: framework classes a repository's hook subclasses
    hook_bases: Tuple[str, ...]
    #: the hook methods the runner calls with itself as the one argument after ``self``
    hook_methods: Tuple[str, ...]
    #: what every runner carries, by attribute
    runner_attributes: Tuple[str, ...]
    #: the module attribute that makes the framework's decorator run a forward pass under
    #: ``torch.cuda.amp.autocast`` (``@auto_fp16`` and ``m.fp16_enabled = True``), and the
    #: first release of the framework that does so
    autocast_switch: str
    autocast_decorator: str
    autocast_since: str
    #: runner classes of the framework whose constructor takes the function that runs the
    #: forward pass (``Runner(model, batch_processor, optimizer)``): that argument, by position
    #: and keyword; the runner calls it as ``processor(model, batch, train_mode=..., **kwargs)``
    processor_runners: Tuple[str, ...] = ()
    processor_position: int = 1
    processor_keyword: str = ""


MMCV = RunnerFramework(
    name="mmcv",
    package="mmcv",
    builders=("build_runner",),
    builder_keyword="default_args",
    runner_bases=("BaseRunner", "EpochBasedRunner", "IterBasedRunner"),
    hook_bases=("Hook", "OptimizerHook"),
    hook_methods=(
        "before_run",
        "after_run",
        "before_epoch",
        "after_epoch",
        "before_iter",
        "after_iter",
        "before_train_epoch",
        "after_train_epoch",
        "before_train_iter",
        "after_train_iter",
    ),
    runner_attributes=("optimizer", "model", "outputs"),
    autocast_switch="fp16_enabled",
    autocast_decorator="auto_fp16",
    # mmcv PR #951: auto_fp16 enters torch.cuda.amp.autocast from this release on (with
    # torch >= 1.6); before it only cast the decorated arguments to float16
    autocast_since="1.3.2",
    # mmcv 0.x's Runner and 1.x's EpochBasedRunner/IterBasedRunner (Runner kept as an alias)
    processor_runners=("Runner", "EpochBasedRunner", "IterBasedRunner"),
    processor_keyword="batch_processor",
)

FRAMEWORKS: Tuple[RunnerFramework, ...] = (MMCV,)

HOOK = "hook"
RUNNER = "runner"


@dataclass(frozen=True)
class FrameworkClass:
    """A top-level class of the file that subclasses a framework's hook or runner."""

    framework: str
    role: str  # HOOK or RUNNER
    #: method -> the expression its runner is in there (``runner`` for a hook, ``self`` for a
    #: runner); methods of a hook outside the framework's hook methods are left out
    methods: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RunnerBuild:
    """``runner = build_runner(cfg, default_args=dict(optimizer=opt, ...))`` in a top-level
    function (``owner``)."""

    framework: str
    owner: str
    line: int
    target: str
    optimizer: str


@dataclass(frozen=True)
class RunnerConstruction:
    """``runner = Runner(model, optimizer=opt, ...)`` in a top-level function (``owner``):
    a class called directly with the optimizer, by its name or through a local alias
    (``Runner = EpochBasedRunnerAmp``, ``Runner = A if c else B``).  ``classes`` are the names
    it may call; the cross-file plan decides whether they are runners."""

    owner: str
    line: int
    target: str
    optimizer: str
    classes: Tuple[str, ...]


@dataclass(frozen=True)
class ProcessorHandoff:
    """``Runner(model, batch_processor, optimizer, ...)`` in a top-level function (``owner``):
    a framework runner built by calling its class, handed ``processor``, the name of the
    function it runs the forward passes with ("" when it is given none, or not a plain name)."""

    framework: str
    owner: str
    line: int
    processor: str


@dataclass
class FrameworkFacts:
    classes: Dict[str, FrameworkClass] = field(default_factory=dict)
    builds: List[RunnerBuild] = field(default_factory=list)
    #: classes called directly with ``optimizer=`` (runners among them are builds too)
    constructions: List[RunnerConstruction] = field(default_factory=list)
    #: top-level definitions that call a framework's builder without a provable runner
    #: name or optimizer (the runner it builds would carry no GradScaler)
    other_builds: List[Tuple[str, int]] = field(default_factory=list)
    #: (owner, line) of ``<module>.<switch> = True`` per framework
    switches: Dict[str, List[Tuple[str, int]]] = field(default_factory=dict)
    #: framework runners built by calling a class that takes a batch processor
    handoffs: List[ProcessorHandoff] = field(default_factory=list)
    #: top-level functions a keyword parameter can be added to (undecorated, no ``*args``
    #: or ``**kwargs``): their parameter names
    open_functions: Dict[str, Tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.classes or self.builds or self.constructions or self.other_builds or self.switches or self.handoffs
        )


def _framework_of(node: ast.AST, imports: Dict[str, Tuple[str, str]], names: Tuple[str, ...]) -> Optional[str]:
    """The framework a base class / called name comes from, when it is one of ``names``."""
    local = node.id if isinstance(node, ast.Name) else None
    attr = node.attr if isinstance(node, ast.Attribute) else None
    for framework in FRAMEWORKS:
        if local is not None and local in imports:
            module, name = imports[local]
            if name in names and (module == framework.package or module.startswith(framework.package + ".")):
                return framework.name
        if attr is not None and attr in names:
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and imports.get(root.id, ("", ""))[0].split(".")[0] == framework.package:
                return framework.name
    return None


def framework_named(name: str) -> RunnerFramework:
    return next(f for f in FRAMEWORKS if f.name == name)


def _class_facts(node: ast.ClassDef, imports: Dict[str, Tuple[str, str]]) -> Optional[FrameworkClass]:
    for base in node.bases:
        for role in (HOOK, RUNNER):
            for framework in FRAMEWORKS:
                names = framework.hook_bases if role == HOOK else framework.runner_bases
                if _framework_of(base, imports, names) != framework.name:
                    continue
                methods = []
                for stmt in node.body:
                    if not isinstance(stmt, ast.FunctionDef) or stmt.decorator_list:
                        continue
                    params = [a.arg for a in stmt.args.posonlyargs + stmt.args.args]
                    if role == RUNNER and params:
                        methods.append((stmt.name, params[0]))
                    elif role == HOOK and stmt.name in framework.hook_methods and len(params) == 2:
                        methods.append((stmt.name, params[1]))
                return FrameworkClass(framework.name, role, tuple(methods))
    return None


def _build(node: ast.Call, holder: Optional[ast.AST], owner: str, imports, facts: FrameworkFacts) -> None:
    """Record ``node`` when it calls a framework's runner builder; ``holder`` is its parent."""
    for framework in FRAMEWORKS:
        if _framework_of(node.func, imports, framework.builders) != framework.name:
            continue
        optimizer = None
        given = next((k.value for k in node.keywords if k.arg == framework.builder_keyword), None)
        if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id == "dict":
            optimizer = next((k.value for k in given.keywords if k.arg == "optimizer"), None)
        target = None
        if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
            target = holder.targets[0].id
        if target is None or optimizer is None:
            facts.other_builds.append((owner, node.lineno))
        else:
            facts.builds.append(RunnerBuild(framework.name, owner, node.lineno, target, ast.unparse(optimizer)))


def _class_aliases(function: ast.AST) -> Dict[str, Tuple[str, ...]]:
    """``Runner = EpochBasedRunnerAmp`` / ``Runner = A if c else B`` in ``function``: the
    local name -> the names it may be bound to (every such binding, together)."""
    aliases: Dict[str, Tuple[str, ...]] = {}
    for stmt in ast.walk(function):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        if all(isinstance(o, ast.Name) for o in options):
            name = stmt.targets[0].id
            aliases[name] = aliases.get(name, ()) + tuple(o.id for o in options)  # type: ignore[attr-defined]
    return aliases


def _construction(node: ast.Call, holder: Optional[ast.AST], owner: str, aliases, facts: FrameworkFacts) -> None:
    """Record ``node`` when it is ``target = Name(..., optimizer=opt, ...)``."""
    if not isinstance(node.func, ast.Name):
        return
    optimizer = next((k.value for k in node.keywords if k.arg == "optimizer"), None)
    if optimizer is None:
        return
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return
    classes = aliases.get(node.func.id, (node.func.id,))
    facts.constructions.append(
        RunnerConstruction(owner, node.lineno, holder.targets[0].id, ast.unparse(optimizer), classes)
    )


def _handoff(node: ast.Call, owner: str, imports, aliases, facts: FrameworkFacts) -> None:
    """Record ``node`` when it calls a framework runner class that takes a batch processor
    (by its imported name, or a local alias bound only to such names)."""
    if not isinstance(node.func, ast.Name):
        return
    for framework in FRAMEWORKS:
        if not framework.processor_runners:
            continue
        names = aliases.get(node.func.id, (node.func.id,))
        if not all(
            _framework_of(ast.Name(id=name), imports, framework.processor_runners) == framework.name for name in names
        ):
            continue
        given = next((k.value for k in node.keywords if k.arg == framework.processor_keyword), None)
        position = framework.processor_position
        if given is None and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
            given = node.args[position] if len(node.args) > position else None
        processor = given.id if isinstance(given, ast.Name) else ""
        facts.handoffs.append(ProcessorHandoff(framework.name, owner, node.lineno, processor))


def _open_function(node: ast.AST) -> Optional[Tuple[str, ...]]:
    if not isinstance(node, ast.FunctionDef) or node.decorator_list or node.args.vararg or node.args.kwarg:
        return None
    arguments = node.args
    return tuple(a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs)


def read_framework_facts(tree: ast.Module, imports: Dict[str, Tuple[str, str]]) -> FrameworkFacts:
    """The framework hooks, runners, runner builds and autocast switches of one file."""
    facts = FrameworkFacts()
    if not any(module.split(".")[0] in {f.package for f in FRAMEWORKS} for module, _ in imports.values()):
        return facts
    for top in tree.body:
        owner = getattr(top, "name", "<module>")
        if isinstance(top, ast.ClassDef):
            found = _class_facts(top, imports)
            if found is not None:
                facts.classes[top.name] = found
        params = _open_function(top)
        if params is not None:
            facts.open_functions[owner] = params
        parents = {child: parent for parent in ast.walk(top) for child in ast.iter_child_nodes(parent)}
        aliases = _class_aliases(top) if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) else {}
        for stmt in ast.walk(top):
            if isinstance(stmt, ast.Call):
                _build(stmt, parents.get(stmt), owner, imports, facts)
                if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    _construction(stmt, parents.get(stmt), owner, aliases, facts)
                    _handoff(stmt, owner, imports, aliases, facts)
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Attribute)
                and isinstance(stmt.value, ast.Constant)
                and stmt.value.value is True
            ):
                for framework in FRAMEWORKS:
                    if stmt.targets[0].attr == framework.autocast_switch:
                        facts.switches.setdefault(framework.name, []).append((owner, stmt.lineno))
    return facts
