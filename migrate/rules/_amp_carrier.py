"""apex.amp kept on a carrier object: ``args.amp = amp`` in the launcher, scaled through
``args.amp.scale_loss(...)`` in a function of the same file the launcher hands ``args`` to.

The route is proven per file, from the stored object's name outwards: the carrier is a plain
name of the launcher (not ``self``); every read of the stored attribute in the file is
``N.amp.<member>(...)`` for a member the GradScaler replaces, either on the carrier itself
later in the launcher, on a parameter ``N`` of a top-level function that only the launcher
calls, after the store, handing the carrier in that slot, or on a parameter ``N`` of a method
of a top-level class every call of which by name (``trainer.fit(args, ...)``; the receiver is
not followed) that fills that slot, in any file, is such a call of the launcher; no other
file calls such a function or the launcher; the carrier is not bound again after the store; and the launcher
hands the carrier to no function or class of the repository that reads an attribute of
that name, itself or through what it calls (``carrier_plan``).  Then the launcher puts the
GradScaler on the carrier where it creates it (``args.scaler = scaler``, on every path) and
the sites read it from there (``args.scaler``).  Anything else is refused with the reason.

A launcher whose carrier is read by a holder class of a file without apex (``holder_route``,
``CarrierFacts.holder``) lends it there: the GradScaler goes on the carrier under the holder's
attribute, whoever calls the launcher, and that file is edited by the driver.

Not followed (a read there of the attribute that no longer exists raises AttributeError on
the mixed-precision path): calls through a subscript or a method of some object that hand
the carrier over, and attributes read by name (``getattr``) in code the carrier reaches so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from ..carrier_plan import CARRIER_ATTRIBUTES, STAR, CarrierFacts
from ._binding import target_binds
from ._edits import code_of
from ._tree import enclosing_function, walk

#: members of apex.amp read through the carrier that have a GradScaler rewrite
CARRIED_MEMBERS = frozenset({"scale_loss", "master_params", "state_dict", "load_state_dict"})
#: builtins that read an object's attributes by name
ATTRIBUTE_READERS = frozenset({"getattr", "hasattr", "vars", "setattr", "delattr"})
#: those of them that only set or delete an attribute
ATTRIBUTE_WRITERS = frozenset({"setattr", "delattr"})


@dataclass(eq=False)
class CarrierRoute:
    """A proven carrier: the store, the carrier's name, and how each site reaches it."""

    store: cst.SimpleStatementLine
    launcher: cst.FunctionDef
    carrier: str
    attribute: str
    new_attribute: str
    #: the ``N.amp.<member>`` expressions, in source order, with their member
    uses: List[Tuple[cst.Attribute, str]] = field(default_factory=list)
    #: function given the carrier -> the expression of the GradScaler inside it
    access: Dict[cst.FunctionDef, str] = field(default_factory=dict)
    #: the launcher's calls that hand the carrier to those functions
    calls: List[cst.Call] = field(default_factory=list)
    #: functions of other files the launcher hands the carrier to (shown as ``name() of
    #: path``), which read the GradScaler from it (``carrier_plan.share_carriers``)
    lent: List[str] = field(default_factory=list)


def carrier_route(rule: Any, module: cst.Module, expr: cst.CSTNode, plan: Any) -> Union[CarrierRoute, str, None]:
    """The route of apex.amp stored by the assignment whose value is ``expr``; a string
    says why it is not proven; None: ``expr`` is not stored as ``name.attr = amp``."""
    parents = rule.parents
    assign = parents.get(expr)
    if not (isinstance(assign, cst.Assign) and assign.value is expr and len(assign.targets) == 1):
        return None
    target = assign.targets[0].target
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
        return None
    carrier, attribute = target.value.value, target.attr.value
    store = parents.get(assign)
    if carrier == "self":
        return _self_route(rule, module, store, target, plan)
    launcher = _top_level_function(parents, store)
    if launcher is None:
        return "it is stored in a method, a nested function or at module level, which are not followed"
    if not isinstance(store, cst.SimpleStatementLine) or len(store.body) != 1:
        return "it is not stored by a statement of its own"
    facts = getattr(plan, "carrier", None)
    if facts is None:
        return "the repository around this file was not indexed"
    state = rule.file_state()  # the first rule to prove the route names the attribute for all
    new_attribute = state.get("carrier_attribute") or next(
        (a for a in CARRIER_ATTRIBUTES if not _named_anywhere(module, a)), None
    )
    if facts.attribute and not state.get("carrier_attribute"):  # one name in every file sharing it
        if _named_anywhere(module, facts.attribute):
            return f"{facts.attribute}, the attribute its files share the GradScaler on, is taken in this file"
        new_attribute = facts.attribute
    if new_attribute is None:
        return f"{' and '.join(CARRIER_ATTRIBUTES)} are both taken as attribute names in this file"
    route = CarrierRoute(store, launcher, carrier, attribute, new_attribute)
    stored_line = rule.line_of(store)
    if _rebinds(rule, launcher, carrier, stored_line + 1):
        return f"{carrier} is bound again in {launcher.name.value}() after apex.amp is stored on it"
    functions: Dict[str, cst.FunctionDef] = {
        s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)
    }
    modules = _imported_names(module)
    for node in walk(module):
        if not (isinstance(node, cst.Attribute) and node.attr.value == attribute and node is not target):
            continue
        if isinstance(node.value, cst.Name) and node.value.value in modules:
            continue  # apex.amp, torch.amp: a module's member, not the carrier's
        why = _use(rule, node, route, functions, stored_line, module, facts)
        if why:
            return why
    for local, where, position, param in facts.borrowed:
        why = _lends(rule, module, local, where, position, param, route, stored_line)
        if why:
            return why
    scaled_here = any(member == "scale_loss" for _use_node, member in route.uses)
    if facts.holder and not route.uses:  # a class of another file reads it as a holder
        route.lent.append(facts.holder)
    if not scaled_here and not route.lent:  # the most exact reason first
        handed = [why for local, why in facts.unlent if _named(module, local)]
        return (handed[0] if handed else _escapes(rule, route, module, facts)
                or f"no loss is scaled through {carrier}.{attribute} in this file" + (
                    f", and {facts.holder_refusal}" if facts.holder_refusal else _read_elsewhere(facts, attribute)))
    if not scaled_here and route.uses:  # its state is read here, the losses scaled elsewhere
        return (f"{code_of(route.uses[0][0])} is read here while the losses are scaled in "
                f"{route.lent[0]}, which this route does not follow")
    escaped = _escapes(rule, route, module, facts)
    if escaped:
        return escaped
    called: Dict[str, str] = {}
    for name, where in facts.called_elsewhere:
        called.setdefault(name, where)  # the first in path order
    unshared = dict(facts.unshared)
    for func in [launcher, *route.access]:
        if not isinstance(parents.get(func), cst.Module):
            continue  # a method: its calls elsewhere were checked by name (_method_use)
        name = func.name.value
        where = called.get(name)
        if func is launcher and facts.holder:
            continue  # it puts the GradScaler on whatever its callers hand it, the holder reads it
        if where is not None and name not in facts.shared:
            return unshared.get(name, f"{name}() is also called from {where}, which this route does not follow")
    state["carrier_attribute"] = new_attribute
    return route


def initialized_before(rule: Any, route: CarrierRoute, inits: List[Any]) -> Optional[str]:
    """Why the GradScaler would not be on the carrier when the sites run (None: it is): the
    training initialize (``inits``, where it is created) must be in the launcher, before
    the store (the calls that hand the carrier come after the store); on ``self``, through
    the stored attribute in ``__init__`` after the store (the other methods run later)."""
    stored = rule.line_of(route.store)
    if route.carrier == "self":
        if inits and all(i.func is route.launcher and rule.line_of(i.call) > stored for i in inits):
            return None
        return "amp.initialize does not run in __init__() after apex.amp is stored on self"
    if inits and all(i.func is route.launcher and rule.line_of(i.call) < stored for i in inits):
        return None
    return f"amp.initialize does not run in {route.launcher.name.value}() before apex.amp is stored on {route.carrier}"


def _use(rule: Any, node: cst.Attribute, route: CarrierRoute, functions: Dict[str, cst.FunctionDef],
         stored_line: int, module: cst.Module, facts: Any) -> str:
    """Why the read ``node`` (``N.amp``) is not covered ("": it is, and is recorded)."""
    parents = rule.parents
    shown = code_of(node)
    member = parents.get(node)
    call = parents.get(member)
    if not (
        isinstance(node.value, cst.Name)
        and isinstance(member, cst.Attribute)
        and member.value is node
        and member.attr.value in CARRIED_MEMBERS
        and isinstance(call, cst.Call)
        and call.func is member
    ):
        return f"{shown} is used here other than by a call of {'/'.join(sorted(CARRIED_MEMBERS))}"
    name = node.value.value
    func = _top_level_function(parents, node)
    if func is route.launcher:
        if name != route.carrier or rule.line_of(node) < stored_line or _rebinds(rule, func, name, stored_line):
            return f"{shown} is read in {func.name.value}() other than through {route.carrier} after it is stored"
        route.uses.append((member, member.attr.value))
        return ""
    if func is None:
        return _method_use(rule, node, member, route, stored_line, module, facts)
    params = [p.name.value for p in func.params.params]
    if name not in params or _rebinds(rule, func, name, 0):
        return f"{shown} in {func.name.value}() is not read from a parameter the carrier is handed to"
    if func not in route.access:
        why = _callers_hand_carrier(rule, func, params.index(name), name, route, stored_line)
        if why:
            return why
        route.access[func] = f"{name}.{route.new_attribute}"
    elif route.access[func] != f"{name}.{route.new_attribute}":
        return f"{func.name.value}() reads apex.amp through two parameters"
    route.uses.append((member, member.attr.value))
    return ""


def _method_use(rule: Any, node: cst.Attribute, member: cst.Attribute, route: CarrierRoute,
                stored_line: int, module: cst.Module, facts: Any) -> str:
    """Why ``node`` (``N.amp``, called as a carried member), read in a method, is not
    covered ("": it is, and is recorded).  Covered: ``N`` is a parameter without a default
    of a plain method of a top-level class, and every call in the repository of a method of
    that name that fills the parameter's slot is the launcher's, after the store, handing
    the carrier there (a call that leaves the slot empty is not this method's, or raises
    TypeError).  The receivers are not followed: the calls are matched by the method's name."""
    from ._amp_sites import class_of_method  # (a cycle at import time)

    parents = rule.parents
    shown = code_of(node)
    method = enclosing_function(parents, node)
    owner = class_of_method(parents, method) if method is not None else None
    if method is None or owner is None or not isinstance(parents.get(owner), cst.Module) or method.decorators:
        return f"{shown} is read in a nested function, a decorated method or at module level, which are not followed"
    name = node.value.value  # type: ignore[attr-defined]
    params = list(method.params.params)
    names = [p.name.value for p in params]
    where = f"{owner.name.value}.{method.name.value}()"
    if name not in names[1:] or _rebinds(rule, method, name, 0):
        return f"{shown} in {where} is not read from a parameter the carrier is handed to"
    if params[names.index(name)].default is not None:
        return f"{name} of {where} has a default, so its callers need not hand the carrier"
    access = f"{name}.{route.new_attribute}"
    if method in route.access:
        if route.access[method] != access:
            return f"{where} reads apex.amp through two parameters"
        route.uses.append((member, member.attr.value))
        return ""
    slot = names.index(name) - 1  # the receiver takes the first
    called = method.name.value
    for other, positional, keywords, starred, path in facts.method_calls_elsewhere:
        if other == called and (starred or positional > slot or name in keywords):
            return f"a method named {called}() is given a value for {name} in {path}, which this route does not follow"
    for other, path in facts.method_values_elsewhere:
        if other == called:
            return f"an attribute named {called} is read other than by a call in {path}, so the calls of {where} are not known"
    for other, path in facts.methods_reading_elsewhere:
        if other == called:
            return (f"a class of {path} also defines {called}() and reads .{route.attribute}: the launcher's "
                    f"call of {called}() may reach it")
    classes = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    found = False
    for ref in walk(module):
        if not (isinstance(ref, cst.Attribute) and ref.attr.value == called):
            continue
        call = parents.get(ref)
        if not (isinstance(call, cst.Call) and call.func is ref):
            return f"{code_of(ref)} is used here other than by a call, so the calls of {where} are not known"
        positional = [a for a in call.args if a.keyword is None and not a.star]
        keyword = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
        starred = any(a.star for a in call.args)
        if not (starred or keyword is not None or slot < len(positional)):
            continue  # the slot stays empty: not this method, or a TypeError
        handed = keyword.value if keyword is not None else (positional[slot].value if slot < len(positional) else None)
        receiver = ref.value
        if (
            starred
            or not isinstance(receiver, cst.Name)
            or receiver.value in classes
            or _top_level_function(parents, call) is not route.launcher
            or rule.line_of(call) < stored_line
            or not (isinstance(handed, cst.Name) and handed.value == route.carrier)
        ):
            return (f"{code_of(call.func)}() is called here other than by {route.launcher.name.value}() "
                    f"on an object handed {route.carrier} as {name} after the store, so {where} may "
                    "read it where no GradScaler is on it")
        route.calls.append(call)
        found = True
    if not found:
        return f"{where} is never called on an object handed {route.carrier}"
    route.access[method] = access
    route.uses.append((member, member.attr.value))
    return ""


def _self_route(
    rule: Any, module: cst.Module, store: Any, target: cst.Attribute, plan: Any
) -> Union[CarrierRoute, str]:
    """``self.amp = amp`` in ``__init__``, every read of ``.amp`` in the repository being
    ``self.amp.<member>(...)`` in a method of that class (``self.amp.initialize`` in
    ``__init__`` after the store): the reads are apex.amp's, and the class keeps the
    GradScaler on ``self`` as for ``amp.<member>`` (the store goes).  ``__init__`` calls no
    method and hands ``self`` to nothing after the store, so no site runs before the
    GradScaler exists.  Stored in another method (``enable_apex``), every read must be in
    that method after the store: the attribute is then no more than a local name for apex.amp."""
    from ._amp_sites import class_of_method  # (a cycle at import time)

    parents = rule.parents
    attribute = target.attr.value
    method = enclosing_function(parents, store)
    owner = class_of_method(parents, method) if method is not None else None
    if method is None or owner is None:
        return "it is stored in a nested function or at module level, which are not followed"
    in_init = method.name.value == "__init__"
    if not isinstance(store, cst.SimpleStatementLine) or len(store.body) != 1:
        return "it is not stored by a statement of its own"
    facts = getattr(plan, "carrier", None)
    route = CarrierRoute(store, method, "self", attribute, "")
    stored_line = rule.line_of(store)
    handed = _scaling_method_handed_on(rule, owner, attribute)
    if handed:
        return handed
    # read only in the storing method, the attribute may be set by name elsewhere (a later
    # set changes no read: each follows the store of the same call)
    by_name = ATTRIBUTE_READERS if in_init else ATTRIBUTE_READERS - ATTRIBUTE_WRITERS
    for node in walk(module):
        if isinstance(node, cst.Call) and code_of(node.func) in by_name:
            return f"{code_of(node.func)}() reads attributes by name in this file"
        if not (isinstance(node, cst.Attribute) and node.attr.value == attribute and node is not target):
            continue
        if isinstance(node.value, cst.Name) and node.value.value in _imported_names(module):
            continue  # apex.amp, torch.amp: a module's member
        member, call = parents.get(node), parents.get(parents.get(node))
        func = enclosing_function(parents, node)
        if not in_init and func is not method:
            return (f"{code_of(node)} is read outside {method.name.value}(), the method that stores apex.amp on "
                    "self, which is not __init__: it may be read before the store")
        allowed = CARRIED_MEMBERS | {"initialize"} if func is method else CARRIED_MEMBERS
        if not (
            isinstance(node.value, cst.Name)
            and node.value.value == "self"
            and isinstance(member, cst.Attribute)
            and member.attr.value in allowed
            and isinstance(call, cst.Call)
            and call.func is member
            and func is not None
            and class_of_method(parents, func) is owner
            and not _rebinds(rule, func, "self", 0)
        ):
            return (
                f"{code_of(node)} is read here other than as self.{attribute}.<member>() "
                f"in a method of {owner.name.value}"
            )
        if func is method and rule.line_of(node) < stored_line:
            return f"{code_of(node)} is read in {method.name.value}() before apex.amp is stored on self"
        route.uses.append((member, member.attr.value))
    # this file's own reads first: they read the same on a second run, whatever the others became
    if facts is None:
        return "the repository around this file was not indexed"
    if facts.read_elsewhere:
        return f"an attribute named {attribute} is also read off an object in {facts.read_elsewhere[0]}"
    if not in_init:
        return route  # read only here, after the store: what the method calls reads nothing of it
    for node in walk(method):
        if rule.line_of(node) <= stored_line or not isinstance(node, (cst.Call, cst.Arg)):
            continue
        if isinstance(node, cst.Arg) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return "__init__() hands self on after apex.amp is stored on it"
        head = node.func if isinstance(node, cst.Call) else None
        while isinstance(head, cst.Attribute):
            if isinstance(head.value, cst.Name) and head.value.value == "self" and head.attr.value != attribute:
                return f"__init__() calls {code_of(node.func)}() after apex.amp is stored on self"
            head = head.value
        if isinstance(head, cst.Call) and code_of(head.func) == "super":
            return "__init__() calls the base class after apex.amp is stored on self"
    return route


def carrier_key(parents: Any, func: cst.FunctionDef) -> str:
    """How the file state names a function the carrier is handed to: ``fit`` for a
    top-level function, ``Runner.fit`` for a method ("" for anything else)."""
    owner = parents.get(parents.get(func))
    if isinstance(parents.get(func), cst.Module):
        return func.name.value
    if isinstance(owner, cst.ClassDef) and isinstance(parents.get(owner), cst.Module):
        return f"{owner.name.value}.{func.name.value}"
    return ""


def _callers_hand_carrier(rule: Any, func: cst.FunctionDef, index: int, param: str, route: CarrierRoute,
                          stored_line: int) -> str:
    """Every reference to ``func`` in the file is a call in the launcher, after the store,
    that hands the carrier as the parameter ``param`` (position ``index``)."""
    name = func.name.value
    why, found = _calls_hand_carrier(rule, rule.parents.get(func), name, (name, f"{name}()"), index, param, route,
                                     stored_line)
    return why or ("" if found else f"{name}() is never called")


def _lends(rule: Any, module: cst.Module, local: str, where: str, position: int, param: str, route: CarrierRoute,
           stored_line: int) -> str:
    """The same for ``local``, a shared function of the file ``where`` (``carrier_plan``),
    which this file need not call; the calls found make the route lend the carrier to it."""
    shown = (f"{local} of {where}", f"{local}() of {where}")
    why, found = _calls_hand_carrier(rule, module, local, shown, position, param, route, stored_line)
    if found and not why:
        route.lent.append(shown[1])
    return why


def _calls_hand_carrier(rule: Any, module: Any, name: str, shown: Tuple[str, str], index: int, param: str,
                        route: CarrierRoute, stored_line: int) -> Tuple[str, bool]:
    """Why a reference to the function ``name`` in ``module`` is not a call in the launcher,
    after the store, that hands the carrier as the parameter ``param`` (position ``index``),
    and whether any call was found (each one is recorded in ``route.calls``); ``shown``: how
    the messages name the function and its call."""
    parents = rule.parents
    found = False
    for node in walk(module):
        if not (isinstance(node, cst.Name) and node.value == name) or not is_reference(parents, node):
            continue
        if isinstance(parents.get(node), (cst.ImportAlias, cst.AsName)):
            continue
        call = parents.get(node)
        if not (isinstance(call, cst.Call) and call.func is node):
            return f"{shown[0]} is used here other than by a call", found
        if _top_level_function(parents, call) is not route.launcher or rule.line_of(call) < stored_line:
            return f"{shown[1]} is called where {route.carrier} holds no apex.amp", found
        if any(a.star for a in call.args):
            return f"{shown[1]} is given *args/**kwargs", found
        positional = [a for a in call.args if a.keyword is None]
        keyword = next((a for a in call.args if a.keyword is not None and a.keyword.value == param), None)
        handed = keyword.value if keyword is not None else (
            positional[index].value if index < len(positional) else None
        )
        if not (isinstance(handed, cst.Name) and handed.value == route.carrier):
            return f"{shown[1]} is not handed {route.carrier} as {param}", found
        route.calls.append(call)
        found = True
    return "", found


def _escapes(rule: Any, route: CarrierRoute, module: cst.Module, facts: Any) -> str:
    """Why the carrier (anywhere in the launcher: what it is handed before the store may keep
    it, or a parameter that receives it) may reach code that reads the stored attribute
    ("": it reaches none)."""
    lent = {local for local, _where, _position, _param in facts.borrowed}
    readers = {name: where for name, where in facts.readers if name not in lent}  # handed as proven
    local_defs = {s.name.value: s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    holders: List[Tuple[cst.FunctionDef, str]] = [(route.launcher, route.carrier)]
    holders += [(f, access.split(".")[0]) for f, access in route.access.items()]
    for func, name in holders:
        for node in walk(func):
            if not isinstance(node, cst.Call) or not any(_hands(rule, a.value, name) for a in node.args):
                continue
            callee = node.func
            if isinstance(callee, cst.Name):
                text = callee.value
                if text in ATTRIBUTE_READERS:
                    return f"{route.carrier} is handed to {text}(), which reads attributes by name"
                local = local_defs.get(text)
                if local is not None:
                    if local not in route.access and _reads_locally(rule, local, route.attribute, readers):
                        return f"{route.carrier} is handed to {text}(), which reads .{route.attribute} otherwise"
                    continue
                if text in readers or (STAR in readers and not _imported_here(rule, callee)):
                    where = readers.get(text, readers.get(STAR))
                    return f"{route.carrier} is handed to {text}() of {where}, which reads .{route.attribute}"
            elif isinstance(callee, cst.Attribute):
                base = callee.value
                while isinstance(base, cst.Attribute):
                    base = base.value
                if isinstance(base, cst.Name) and base.value in readers:
                    return (f"{route.carrier} is handed to {code_of(callee)}() of {readers[base.value]}, "
                            f"a file that reads .{route.attribute}")
    return ""


def _reads_locally(rule: Any, definition: cst.CSTNode, attribute: str, readers: Dict[str, str]) -> bool:
    """The same-file function or class reads ``.attribute`` itself or calls an imported
    name that does."""
    if _reads_attribute(definition, attribute):
        return True
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
        and (n.func.value in readers or (STAR in readers and not _imported_here(rule, n.func)))
        for n in walk(definition)
    )


def is_reference(parents: Any, node: cst.Name) -> bool:
    """The Name refers to what it names (not ``x.name``, ``f(name=...)``, ``def name``)."""
    parent = parents.get(node)
    kind = type(parent)  # (no LibCST node class is derived from these)
    return not (
        (kind is cst.Attribute and parent.attr is node)
        or (kind is cst.Arg and parent.keyword is node)
        or kind is cst.Param
        or kind is cst.ImportAlias
        or ((kind is cst.FunctionDef or kind is cst.ClassDef) and parent.name is node)
    )


def _imported_names(module: cst.Module) -> Set[str]:
    """The names the file's imports bind (``torch``, ``apex``, ``np``)."""
    names: Set[str] = set()
    for node in walk(module):
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                names.add(code_of(bound).split(".")[0])
    return names


def _imported_here(rule: Any, name: cst.Name) -> bool:
    return bool(rule.qualified_names(name))


def _hands(rule: Any, expr: cst.CSTNode, name: str) -> bool:
    """``expr`` may hand over the object ``name`` itself (``args``, ``[args]``), not only
    something read from it (``args.output_path``)."""
    return any(
        isinstance(n, cst.Name)
        and n.value == name
        and not (isinstance(rule.parents.get(n), cst.Attribute) and rule.parents[n].value is n)
        for n in walk(expr)
    )


def _reads_attribute(func: cst.CSTNode, attribute: str) -> bool:
    return any(isinstance(n, cst.Attribute) and n.attr.value == attribute for n in walk(func))


def _rebinds(rule: Any, func: cst.FunctionDef, name: str, after: int) -> bool:
    """``name`` is assigned in ``func`` (other than as its parameter) from line ``after`` on."""
    for node in walk(func.body):
        targets: List[Any] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        if any(target_binds(t, name) for t in targets) and not (after and rule.line_of(node) < after):
            return True
    return False


def _named(module: cst.Module, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(module))


def _named_anywhere(module: cst.Module, attribute: str) -> bool:
    return any(isinstance(n, cst.Attribute) and n.attr.value == attribute for n in walk(module))


def _top_level_function(parents: Any, node: Any) -> Optional[cst.FunctionDef]:
    """The module-level function ``node`` is directly in (through blocks, not through a
    nested function, class or lambda), else None."""
    cur = node
    while cur in parents:
        cur = parents[cur]
        if isinstance(cur, cst.FunctionDef):
            return cur if isinstance(parents.get(cur), cst.Module) else None
        if isinstance(cur, (cst.ClassDef, cst.Lambda)):
            return None
    return None


def _read_elsewhere(facts: CarrierFacts, attribute: str) -> str:
    """Where else an attribute of that name is read off an object, as a clause ("" where nowhere)."""
    if not facts.read_elsewhere:
        return ""
    return f", and an attribute named {attribute} is read off an object in {', '.join(facts.read_elsewhere)}"


def _scaling_method_handed_on(rule: Any, owner: cst.ClassDef, attribute: str) -> str:
    """Why a method of ``owner`` that scales through ``self.<attribute>`` cannot be followed:
    it is read as a value (``trainer.backward = self.backward``), so whoever calls it, the
    forward pass of the loss it is given and the optimizer step are elsewhere ("" if none)."""
    methods = {}
    for stmt in owner.body.body:
        if isinstance(stmt, cst.FunctionDef) and any(
            isinstance(n, cst.Attribute) and n.attr.value == "scale_loss" and isinstance(n.value, cst.Attribute)
            and n.value.attr.value == attribute and code_of(n.value.value) == "self"
            for n in walk(stmt)
        ):
            methods[stmt.name.value] = stmt
    for node in walk(owner):
        if not (isinstance(node, cst.Attribute) and node.attr.value in methods and code_of(node.value) == "self"):
            continue
        parent = rule.parents.get(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            continue
        assign = parent if isinstance(parent, cst.Assign) else None
        func = enclosing_function(rule.parents, node)
        shown = (f"`{code_of(assign).strip()}`" if assign is not None
                 else f"in {func.name.value}()" if func is not None else "in the class body")
        return (
            f"{owner.name.value}.{node.attr.value}(), which scales the losses through self.{attribute}, is handed on "
            f"as a value ({shown}): its callers, the forward passes that compute the losses it is given and the "
            "optimizer step are not followed"
        )
    return ""
