"""The cross-file plan's attach route: an instance built before ``amp.initialize`` gets the
GradScaler as an attribute once it exists.

Kaggle-2020-Alaska2's launcher builds ``fitter = Fitter(net, ...)`` (the class makes its own
optimizer), then initializes ``fitter.model, fitter.optimizer``.  The constructor cannot take
a GradScaler that does not exist yet; the launcher puts it on the instance right where it is
created instead (``fitter.scaler = scaler``, on every path), and the class's methods that
use amp read ``self.scaler`` (the plan's ``carried`` methods).  Proven only when that is the
one instance whose methods run: the class is built once, in the initializing definition of
a launcher, bound to a name nothing rebinds and no method is called on before the
initialize; no class of the walked files derives from it; its ``__init__`` reaches none of
its methods that use amp, and those all use it on ``self``.  Pure data.
"""

from __future__ import annotations

from typing import Dict, List, Set, Tuple, Union

from .repo_index import SCALER_MEMBERS, ModuleSummary

Def = Tuple[str, str]


def attach_route(
    item: Def, calls: List[Tuple[Def, int]], by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions,
    heirs: Set[Def],
) -> Union[str, Tuple[str, str, str]]:
    """(launcher path, its initializing definition, the instance's name) for the class
    ``item`` built before the initialize, else why not."""
    path, name = item
    owner = by_path[path]
    if heirs - {item}:
        return f"a class derives from {name}"
    sites = [s for s in owner.amp_sites if s.owner == name]
    odd = next((s for s in sites if not s.method or s.receiver != "self" or s.member not in SCALER_MEMBERS), None)
    if odd is not None:
        return f"{name} uses amp.{odd.member} other than in a method on self"
    users = {s.method for s in sites}
    reached, work = set(), ["__init__"]
    while work:
        method = work.pop()
        if method in reached:
            continue
        reached.add(method)
        work.extend(owner.method_self_calls.get((name, method), ()))
    if reached & users:
        return f"{name}.__init__ runs {sorted(reached & users)[0]}(), which uses amp before the GradScaler exists"
    if len(calls) != 1:
        return f"{name} is built more than once"
    (launcher, definition), line = calls[0]
    if launcher not in launchers:
        return f"{name} is built outside the launcher"
    user = by_path[launcher]
    locals_ = {
        local for local, (module, attr) in user.imports.items()
        if attr and definitions.find(module, attr, launcher) == item
    }
    bound = [n for (d, n), kinds in user.bindings.items() if d == definition and set(kinds) & locals_]
    if len(bound) != 1 or len(user.bindings[(definition, bound[0])]) != 1:
        return f"the {name} built in {user.shown} is not kept in one name bound once"
    instance = bound[0]
    inits = [s for s in user.training_inits if s.owner == definition]
    if any(s.optimizer_text != f"{instance}.optimizer" for s in inits):
        return f"the amp.initialize of {user.shown} is not given {instance}.optimizer"
    init_line = min(s.line for s in inits)
    early = [c for c in user.method_calls if c.owner == definition and c.receiver == instance and c.line < init_line]
    if early:
        return f"{instance}.{early[0].method}() runs before amp.initialize"
    return (launcher, definition, instance)

