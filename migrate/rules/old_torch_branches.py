"""APX249: an ``if`` on ``torch.__version__`` whose branch for an old torch holds apex.amp and
whose other branch is the file's own GradScaler path keeps only the branch every supported
torch takes (native target only).

``if LooseVersion(torch.__version__) >= LooseVersion("1.6.0"): scaler = GradScaler() else:
from apex import amp; model, opt = amp.initialize(...)``: no torch from ``--target-torch`` on
runs the ``else``, so the original, run there, never touched apex.  The ``if`` becomes the
body of its live branch (``_torch_version`` decides the test), and the apex.amp rules that
run next see the file the target torch runs.  Left as it is (the apex.amp rules then keep
the shim and say why) when the live branch makes no GradScaler (dropping the apex branch
would drop mixed precision), or when a name the dead branch binds is read elsewhere
without being bound before the ``if`` or by the live branch.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Set, Union, cast

import libcst as cst
from libcst.metadata import ScopeProvider

from ._binding import block_binds, bound_at
from ._edits import code_of, kept_leading, prepend_lines
from ._neighbour_base import NeighbourRule
from ._torch_version import newer_torch_passes
from ._tree import children, walk
from .base import Example

_GRAD_SCALERS = {
    "torch.cuda.amp.GradScaler",
    "torch.amp.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
}
#: at most this many of the dropped branch's calls are named in the finding
_NAMED_CALLS = 6


#: the version test's branches inside a setup function: the new torch's GradScaler, apex's initialize
OLD_TORCH_BRANCH = """\
        if LooseVersion(torch.__version__) >= LooseVersion("1.6.0"):
            scaler = torch.cuda.amp.GradScaler()
        else:
            from apex import amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            if resume:
                amp.load_state_dict(torch.load(resume)["amp"])
"""
OLD_TORCH_SETUP = (
    """\
from distutils.version import LooseVersion

import torch


def setup(model, optimizer, use_amp, resume):
    amp, scaler = None, None
    if use_amp:
        # mixed precision
"""
    + OLD_TORCH_BRANCH
    + """\
    return model, optimizer, amp, scaler
"""
)
#: a training loop with a path for each: apex's scale_loss runs only where no scaler was made
TRAIN_ON_EITHER_PATH = """\


def train(model, optimizer, batches, amp, scaler):
    for inputs, targets in batches:
        if scaler is not None:
            with torch.cuda.amp.autocast():
                loss = torch.nn.functional.mse_loss(model(inputs), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        optimizer.zero_grad()
"""
#: ``amp`` bound only by the dead branch, read after the ``if``
UNBOUND_AFTER_THE_IF = """\
from distutils.version import LooseVersion

import torch


def setup(model, optimizer):
    if LooseVersion(torch.__version__) >= LooseVersion("1.6.0"):
        scaler = torch.cuda.amp.GradScaler()
    else:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer, amp, scaler
"""
_NO_SCALE_LOSS_TODO = """\
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled elsewhere;
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""
_PASSED_ON_TODO = """\
    # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed;
    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""


class OldTorchBranchRule(NeighbourRule):
    """Keep only the live branch of a torch version test whose dead branch is apex.amp's."""

    DESCRIPTION = "Drop the branch of a torch version test that only an older torch than --target-torch takes."
    CODES = {
        "APX249": (
            "branch for a torch older than --target-torch dropped: it held apex.amp, the branch kept is the "
            "file's own GradScaler path, the one the original runs on every supported torch"
        ),
    }
    TRIGGERS = (b"__version__",)

    @classmethod
    def applies_to(cls, settings) -> bool:  # type: ignore[no-untyped-def]
        return settings.target == "native" and super().applies_to(settings)

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        #: the names the dropped tests called (``LooseVersion``): their imports go if unused
        self._version_names: Set[str] = set()
        return super().visit_Module(node)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        module = super().leave_Module(original_node, updated_node)
        unused = self._version_names - _names_read(module)
        return _without_imports_of(module, unused) if unused else module

    def leave_If(self, original_node: cst.If, updated_node: cst.If):  # type: ignore[no-untyped-def]
        passes = newer_torch_passes(original_node.test, self.settings.target_torch)
        if passes is None or not isinstance(self.parent(original_node), (cst.IndentedBlock, cst.Module)):
            return updated_node  # an ``elif`` is no statement of a block
        live, dead = _branches(original_node, passes)
        if live is None or dead is None or not self._holds_apex_amp(dead) or not self._makes_grad_scaler(live):
            return updated_node
        if self._dangling(original_node, live, dead):
            return updated_node
        new_live = _branches(updated_node, passes)[0]
        assert new_live is not None
        self.report(original_node, "APX249", self._message(original_node, dead), fixed=True, severity="warning")
        self._version_names.update(_call_roots(original_node.test))
        body = list(new_live.body)
        body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
        return cst.FlattenSentinel(body)

    def _holds_apex_amp(self, tree: cst.CSTNode) -> bool:
        for node in walk(tree):
            if isinstance(node, (cst.Import, cst.ImportFrom)) and _imports_apex_amp(node):
                return True
            if isinstance(node, (cst.Name, cst.Attribute)) and any(
                q == "apex.amp" or q.startswith("apex.amp.") for q in self.qualified_names(node)
            ):
                return True
        return False

    def _makes_grad_scaler(self, block: cst.BaseSuite) -> bool:
        return any(
            isinstance(node, cst.Call) and not _GRAD_SCALERS.isdisjoint(self.qualified_names(node.func))
            for node in walk(block)
        )

    def _dangling(self, stmt: cst.If, live: cst.BaseSuite, dead: cst.BaseSuite) -> bool:
        """Whether a name the dead branch binds is read outside it where neither a binding
        before the ``if`` nor the live branch binds it."""
        return dead_binding_read(self, stmt, live, [dead])

    def _message(self, stmt: cst.If, dead: cst.BaseSuite) -> str:
        calls: List[str] = []
        for node in walk(dead):
            if isinstance(node, cst.Call) and self._holds_apex_amp(node):
                text = code_of(node.func)
                if text not in calls:
                    calls.append(text)
        named = ", ".join(f"{c}()" for c in calls[:_NAMED_CALLS]) + (", ..." if len(calls) > _NAMED_CALLS else "")
        target = ".".join(map(str, self.settings.target_torch))
        return (
            f"the branch of `{code_of(stmt.test)}` that no torch from {target} on (--target-torch) takes is "
            f"dropped with the apex.amp code in it ({named}); the branch kept, with its GradScaler, is the one the "
            "original runs on every supported torch: what only the dropped branch did (apex's opt_level, functions "
            "registered to run in float32, the amp state restored from a checkpoint) does not happen there either"
        )

    EXAMPLES = [
        Example(
            "apex-branch-of-an-old-torch-dropped-beside-the-files-own-grad-scaler",
            OLD_TORCH_SETUP + TRAIN_ON_EITHER_PATH,
            OLD_TORCH_SETUP.replace("from distutils.version import LooseVersion\n\n", "").replace(
                OLD_TORCH_BRANCH, '        scaler = torch.amp.GradScaler("cuda")\n'
            )
            + TRAIN_ON_EITHER_PATH.replace("torch.cuda.amp.autocast()", 'torch.autocast("cuda")'),
            ("APX249", "APX901", "APX902"),
        ),
        Example(
            "apex-branch-of-an-old-torch-kept-where-a-name-it-binds-is-read-after-the-if",
            UNBOUND_AFTER_THE_IF,
            UNBOUND_AFTER_THE_IF.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")')
            .replace("        from apex import amp\n", "        from apexcompat import amp\n" + _NO_SCALE_LOSS_TODO)
            .replace("    return model,", _PASSED_ON_TODO + "    return model,"),
            ("APX102", "APX220", "APX220", "APX902"),
        ),
    ]


def dead_binding_read(rule: Any, stmt: cst.CSTNode, live: cst.BaseSuite, dead: Sequence[cst.CSTNode]) -> bool:
    """Whether a name that one of the ``dead`` parts of ``stmt`` (code about to be dropped)
    binds is read outside them where neither a binding before ``stmt`` nor the ``live``
    block that replaces it binds it; True too where the scopes are unknown."""
    inside = {id(node) for part in dead for node in walk(part)}
    scope = rule.get_metadata(ScopeProvider, stmt, None)
    if scope is None:
        return True
    for name in sorted(set().union(*(_bound_names(part) for part in dead))):
        read_outside = any(
            id(assignment.node) in inside and any(id(a.node) not in inside for a in assignment.references)
            for assignment in scope[name]
        )
        if read_outside and not (bound_at(name, stmt, rule.parent, scope) or block_binds(live, name)):
            return True
    return False


def _branches(stmt: cst.If, passes: bool):  # type: ignore[no-untyped-def]
    """(live, dead) blocks of ``stmt`` when the new torch's answer is ``passes``; a branch
    that is an ``elif`` or missing is None."""
    orelse: Optional[cst.BaseSuite] = stmt.orelse.body if isinstance(stmt.orelse, cst.Else) else None
    return (stmt.body, orelse) if passes else (orelse, stmt.body)


def _imports_apex_amp(node: Union[cst.Import, cst.ImportFrom]) -> bool:
    if isinstance(node, cst.ImportFrom):
        module = code_of(node.module) if node.module is not None else ""
        if module == "apex.amp" or module.startswith("apex.amp."):
            return True
        names = node.names
        return module == "apex" and not isinstance(names, cst.ImportStar) and any(
            code_of(alias.name) == "amp" for alias in names
        )
    return any(code_of(alias.name) == "apex.amp" or code_of(alias.name).startswith("apex.amp.") for alias in node.names)


def _bound_names(block: cst.CSTNode) -> Set[str]:
    """Names the block binds in its own scope (not inside a function or class it defines)."""
    found: Set[str] = set()
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            found.add(node.name.value)
            continue
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else None
                found.add(bound.value if isinstance(bound, cst.Name) else code_of(alias.name).split(".", 1)[0])
            continue
        for target in _targets(node):
            found.update(n.value for n in walk(target) if isinstance(n, cst.Name) and _is_bare_target(target, n))
        stack.extend(children(node))
    return found


def _targets(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    if isinstance(node, cst.AssignTarget):
        yield node.target
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        yield node.target
    elif isinstance(node, (cst.For, cst.CompFor)):
        yield node.target
    elif isinstance(node, cst.AsName):
        yield node.name
    elif isinstance(node, cst.NamedExpr):
        yield node.target


def _is_bare_target(target: cst.CSTNode, name: cst.Name) -> bool:
    """``name`` is bound by ``target`` itself, not read in it (``x.attr``, ``x[i]``)."""
    if target is name:
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_is_bare_target(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _is_bare_target(target.value, name)
    return False


def _call_roots(test: cst.BaseExpression) -> Set[str]:
    """The names the calls of ``test`` start from (``LooseVersion``, ``version`` of
    ``version.parse``)."""
    roots = set()
    for node in walk(test):
        if isinstance(node, cst.Call):
            root = node.func
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name):
                roots.add(root.value)
    return roots


def _names_read(module: cst.Module) -> Set[str]:
    """Every name the module mentions outside its import statements."""
    found: Set[str] = set()
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            continue
        if isinstance(node, cst.Name):
            found.add(node.value)
        stack.extend(children(node))
    return found


def _sole_binding(stmt: cst.CSTNode) -> Optional[str]:
    """The one name a top-level ``import N`` / ``from M import N`` line binds, else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
        return None
    if len(small.names) != 1:
        return None
    alias = small.names[0]
    bound = alias.asname.name if alias.asname is not None else alias.name
    return bound.value if isinstance(bound, cst.Name) else None


def _without_imports_of(module: cst.Module, names: Set[str]) -> cst.Module:
    """``module`` less its top-level import lines that bind only one of ``names``; the blank
    lines and comments above a removed line stay on the next statement, and a removed first
    statement leaves no blank line at the top of the file."""
    body: List[cst.CSTNode] = []
    carry: List[cst.EmptyLine] = []
    opened = False
    for index, stmt in enumerate(module.body):
        if _sole_binding(stmt) in names:
            carry += kept_leading(cast(Any, stmt).leading_lines)
            opened = opened or index == 0
            continue
        if carry or opened:
            stmt = prepend_lines(stmt, carry) if carry else stmt
            if opened and not body:
                lines = list(cast(Any, stmt).leading_lines)
                while lines and lines[0].comment is None:
                    lines.pop(0)
                stmt = stmt.with_changes(leading_lines=lines)
            carry, opened = [], False
        body.append(stmt)
    return module.with_changes(body=body)
