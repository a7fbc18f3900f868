"""A plain ``loss.backward()`` in the other branch of the ``if`` that scales the loss.

``if args.fp16: with amp.scale_loss(loss, opt) as s: s.backward() else: loss.backward()``
and one ``optimizer.step()`` after the ``if``: apex's patched step stepped the plain
gradients as they were.  The step now goes through the GradScaler, which is switched by
the initialize's own test (the opt level, ``args.amp``), not by ``args.fp16``: where the
GradScaler is on and the plain branch runs, ``scaler.step`` would divide unscaled gradients
by the loss scale (or raise, ``_scale`` is None, before any scaled backward).  The plain
backward becomes ``scaler.scale(loss).backward()`` too: disabled, ``scale`` is the identity;
enabled, the step divides out the scale every gradient carries (``_plain_backward``).

It stays plain where the branch provably runs only with the GradScaler off: the ``if``'s
test is made of the conditions the GradScaler's switch is made of (the initialize ran under
``if args.fp16:`` and the loss is scaled under ``if args.fp16:``), or is the switch itself
(``use_amp``, ``scaler.is_enabled()``), or, for a plain backward in the ``if``'s own body,
its negation.  Texts are compared as expressions, as the initialize rule compares them.

A gradient reader after the plain backward in its branch (a clip, a norm, ``.grad``) would
now see scaled gradients: ``scaler.unscale_(optimizer)`` goes before the statement holding
the first one, where the step surely follows once (it is on the ``if``'s own block, after
it); elsewhere the backward stays plain, as before (``readers_unscale``), and so does one in a
function that also steps another optimizer plainly (scaled gradients it left on that optimizer's
parameters would be stepped as they are; an lr scheduler or an object that provably holds no
parameters is no such optimizer, ``_stepped_objects``): each with a warning that the branch must
run with the GradScaler off (APX256).  A step inside the scaling branch is not on the plain branch's path.
Where both branches read the same after the rewrite, the ``if`` goes (``_same_branches``).
"""

from __future__ import annotations

import ast
from typing import Any, FrozenSet, List, Optional, Tuple

import libcst as cst

from ._amp_narrowed_step import conditions
from ._edits import code_of, same_expression
from ._tree import inside, walk, walk_of

#: file-state key: per GradScaler creation of the initialize rule, ``(target, switch,
#: parts, func)``: where it is kept, its ``enabled=`` text (None: always on), its ``and``-ed
#: conditions, each as the texts that hold its value (None: always off), the function of
#: the initialize (``scope_key``) and the bare names among the conditions it does not bind
#: (module names, the same in any function that does not bind them); ``"several"``
#: where a creation the rule did not record may be the one that ran
SCALER_SWITCHES = "scaler_switches"


#: the nodes through which a function binds a name
_BINDERS = (
    cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.AsName, cst.Global, cst.Nonlocal,
)


def bound_names(func: Any) -> FrozenSet[str]:
    """The names ``func`` binds (its parameters, what it assigns or imports, its ``global``s
    too: a module name it rebinds is no constant); empty at module level."""
    if func is None:
        return frozenset()
    found = {p.name.value for p in walk_of(func.params, cst.Param)}
    for node in walk_of(func.body, *_BINDERS):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            found |= {n.value for n in walk_of(node.target, cst.Name)}
        elif isinstance(node, cst.AsName):
            found |= {n.value for n in walk_of(node.name, cst.Name)}
        else:
            found |= {item.name.value for item in node.names}
    return frozenset(found)


def _binds(node: Any, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(node))


def attribute_aliases(parents: Any, func: Any, part: str) -> List[str]:
    """``self.half`` for the condition ``half`` of an initialize in ``__init__(self, net,
    half)`` that runs ``self.half = half``, where nothing rebinds ``half`` in it and
    nothing else in the class assigns ``self.half``: the same value wherever it is read."""
    if func is None or not func.params.params or not any(p.name.value == part for p in func.params.params):
        return []
    owner = parents.get(parents.get(func))
    if not isinstance(owner, cst.ClassDef):
        return []
    me = func.params.params[0].name.value
    bound = [
        t
        for n in walk(func.body)
        for t in (
            [a.target for a in n.targets] if isinstance(n, cst.Assign)
            else [n.target] if isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr))
            else [i.asname.name for i in n.items if i.asname] if isinstance(n, cst.With)
            else []
        )
    ]
    if any(_binds(t, part) for t in bound if not isinstance(t, cst.Attribute)):
        return []
    found = []
    for stmt in func.body.body:
        assign = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not isinstance(assign, cst.Assign):
            continue
        if len(assign.targets) != 1 or code_of(assign.value).strip() != part:
            continue
        target = assign.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me):
            continue
        text = f"self.{target.attr.value}"
        writes = [
            n for n in walk(owner)
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign))
            and any(isinstance(x, cst.Attribute) and x.attr.value == target.attr.value for x in walk(n.target))
        ]
        if len(writes) == 1:
            found.append(text)
    return found


def alternative_if(parents: Any, node: Any, with_stmt: Any, func: Any) -> Optional[Tuple[cst.If, bool]]:
    """The ``if`` one branch of which holds ``with_stmt`` and another ``node``, and whether
    ``node`` runs when its test fails (the ``with`` is in its body); None when there is none."""
    cur = with_stmt
    while cur is not None and cur is not func:
        parent = parents.get(cur)
        if isinstance(parent, (cst.If, cst.Else)):
            branch_if = parent if isinstance(parent, cst.If) else parents.get(parent)
            if isinstance(branch_if, cst.If):
                in_body = inside(parents, with_stmt, branch_if.body)
                other = branch_if.orelse if in_body else branch_if.body
                if other is not None and inside(parents, node, other):
                    return branch_if, in_body
        cur = parent
    return None


def _negation(test: cst.BaseExpression) -> Optional[str]:
    """The text of ``test``'s negation where it is spelt ``not x`` or a flipped comparison."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return code_of(test.expression)
    flips = {"==": "!=", "!=": "==", "is": "is not", "is not": "is", "in": "not in", "not in": "in"}
    try:
        tree = ast.parse(code_of(test).strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(tree, ast.Compare) and len(tree.ops) == 1:
        op = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
        text = op.get(type(tree.ops[0]))
        if text is not None:
            return f"{ast.unparse(tree.left)} {flips[text]} {ast.unparse(tree.comparators[0])}"
    return None


def scope_key(parents: Any, func: Any) -> Tuple[Optional[str], Optional[str]]:
    """``(class name, function name)`` of ``func`` (None for a module level or a plain
    function's class): the same across the rules' trees of one file."""
    if func is None:
        return None, None
    owner = parents.get(parents.get(func))
    return (owner.name.value if isinstance(owner, cst.ClassDef) else None), func.name.value


def only_disabled(rule: Any, func: Any, scaler: str, test: cst.BaseExpression, when_false: bool) -> bool:
    """Whether a branch of ``func`` that runs when ``test`` is false (``when_false``) or true
    runs only with the GradScaler ``scaler`` off, as far as the initialize rule's records
    show: each ``and``-ed condition of the test (of its negation, for ``when_false`` False)
    holds the value of one of the switch's conditions, or the switch itself, for every
    creation.  A bare name counts in the initialize's own function only, ``self.x`` in the
    methods of its class."""
    home = scaler.split("[", 1)[0]
    if when_false:
        wanted = conditions(test)
    else:
        negated = _negation(test)
        if negated is None:
            return False
        try:
            wanted = conditions(cst.parse_expression(negated))
        except Exception:  # noqa: BLE001 - an unparsable negation is no proof
            return False
    if all(same_expression(c, f"{home}.is_enabled()") for c in wanted):
        return True  # the GradScaler's own switch
    made = rule.file_state().get(SCALER_SWITCHES) or []
    if not made or any(entry == "several" or entry[0] != home for entry in made):
        return False
    for _target, switch, parts, where, free in made:
        if parts is None:
            continue  # O0 or enabled=False: never on
        names = [text for texts in parts for text in texts] + ([switch] if switch else [])
        here = scope_key(rule.parents, func)
        same_class = here[0] is not None and here[0] == where[0]
        local = bound_names(func)
        names = [
            n for n in names
            if (where == here or (n in free and n not in local) if n.isidentifier()
                else same_class if n.startswith("self.") else True)
        ] + [f"{home}.is_enabled()"]
        if not all(any(same_expression(c, n) for n in names) for c in wanted):
            return False
    return True


def _reads_gradients(node: Any) -> bool:
    for sub in walk(node):
        if isinstance(sub, cst.Attribute) and sub.attr.value == "grad":
            return True
        if isinstance(sub, cst.Call):
            callee = code_of(sub.func)
            if any(word in callee for word in ("clip", "grad_norm", "master_params")):
                return True
            if any(code_of(a.value).rstrip().endswith(".parameters()") for a in sub.args):
                return True
    return False


def _clause_blocks(branch: Any) -> List[Any]:
    """The blocks of the clauses of ``branch`` (a block, an ``else``, or an ``elif`` chain)."""
    if isinstance(branch, cst.IndentedBlock):
        return [branch]
    if isinstance(branch, cst.Else):
        return [branch.body]
    if isinstance(branch, cst.If):
        return [branch.body] + (_clause_blocks(branch.orelse) if branch.orelse is not None else [])
    return []


def readers_unscale(parents: Any, call: cst.Call, head: cst.If, other: Any, step: cst.Call) -> Tuple[bool, Any]:
    """Where a scaled plain backward ``call`` in ``other`` (the branch of ``head`` that does
    not scale) needs ``scaler.unscale_`` before a gradient reader: ``(True, None)`` when
    nothing after it in the branch reads the gradients, ``(True, stmt)`` to put one before
    ``stmt``, ``(False, None)`` when one is needed but cannot be shown to run once before
    the step: the backward is not a statement of the branch's own block, a reader shares its
    line, or the step is not on the block of ``head``'s if-chain, after it."""
    nodes = list(walk(other))
    skip = {id(n) for n in walk(call)}
    after = [n for n in nodes[nodes.index(call) + 1 :] if id(n) not in skip]
    readers = [n for n in after if _reads_gradients(n) and not isinstance(n, cst.BaseStatement)]
    if not readers:
        return True, None
    line: Any = call
    while line is not None and not isinstance(parents.get(line), cst.IndentedBlock):
        line = parents.get(line)
    block = parents.get(line) if line is not None else None
    if not isinstance(line, cst.SimpleStatementLine) or not any(block is b for b in _clause_blocks(other)):
        return False, None
    later = list(block.body)[list(block.body).index(line) + 1 :]
    first = next((s for s in later if _reads_gradients(s)), None)
    if first is None or any(not any(r is n for s in later for n in walk(s)) for r in readers):
        return False, None
    step_line: Any = step
    while step_line is not None and not isinstance(parents.get(step_line), cst.IndentedBlock):
        step_line = parents.get(step_line)
    top = head
    while isinstance(parents.get(top), cst.If) and parents[top].orelse is top:  # an elif: the chain's first if
        top = parents[top]
    outer = parents.get(top)
    if step_line is None or parents.get(step_line) is not outer:
        return False, None
    rest = list(outer.body)
    if rest.index(step_line) < rest.index(top):
        return False, None
    return True, first
