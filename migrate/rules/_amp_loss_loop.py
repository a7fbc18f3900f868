"""Autocast spans for a loss summed in a loop of an outer block and only rescaled next to its
``amp.scale_loss`` (DL-Art-School's training step)::

    for inj in self.injectors:                  # the forward passes (span 1)
        local_state.update(inj(local_state))
    if train:
        total_loss = 0                          # the loss (span 2)
        for name, loss in self.losses.items():
            total_loss += loss(self.net, local_state) * self.weights[name]
        if isinstance(total_loss, torch.Tensor):
            total_loss = total_loss / accum
            with amp.scale_loss(total_loss, self.optimizers) as scaled_loss:
                scaled_loss.backward()

Under apex's O1 every call between initialize and the end ran with its casts.  Natively the
regions hold the loop that sums the loss (from the statement that sets it from constants) and,
in the enclosing blocks up to the one holding that loop's ``if``, every statement from the
first that calls anything (not torch's API, a builtin or a container method) and fills what the
loss loop reads, through the ``if``: all the computation of this call before the backward but
the ``if`` tests, the rescale and bystanders (metrics) that bind nothing of the loss.  None
when any part has another shape (a loop autocast cannot span whole, a step or backward there,
no constant start of the loss in the loop's block, a rescale that calls something).
"""

from __future__ import annotations

from typing import Any, List, Optional

import libcst as cst

from ._amp_sites import assigned_names, code_of, enclosing, self_name, walk

#: calls that compute nothing a forward pass would (conversions, container plumbing)
_PLAIN_BUILTINS = frozenset({"str", "dict", "list", "tuple", "set", "bool", "int", "float", "len", "isinstance",
                             "hasattr", "getattr", "range", "enumerate", "zip", "sorted", "min", "max", "sum",
                             "any", "all", "print", "type", "abs"})
#: the methods an expression statement calls that run no forward pass
_NOT_A_FORWARD = frozenset({"step", "backward"})
_PLAIN_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault", "items", "keys", "values",
                            "get", "copy", "pop", "format", "join", "size", "dim", "item", "detach", "clone",
                            "to", "cuda", "cpu"})


def loss_loop_spans(rule: Any, body: List[Any], end: int, loss_texts: set) -> Optional[List[List[Any]]]:
    """The spans of the module docstring for the loss last set at ``body[end]`` (a rescale of a
    loss from before its block), outermost first; None when the shape is not there."""
    from ._amp_autocast import _builds_on  # (here, not above: that module imports this one)

    block = rule.parents.get(body[end])
    guard = rule.parents.get(block)
    if not isinstance(guard, cst.If) or guard.body is not block:
        return None
    for stmt in body[: end + 1]:
        if assigned_names(stmt) & loss_texts:
            if not _builds_on(stmt, loss_texts) or _computes(stmt):
                return None
        elif not (rule._is_bystander(stmt, loss_texts) or rule._is_exit_guard(stmt, loss_texts)):
            return None
    outer = _statements(rule.parents.get(guard))
    if guard not in outer:
        return None
    loop_at = None
    for j in range(outer.index(guard) - 1, -1, -1):
        if rule._accumulates_loss(outer[j], loss_texts):
            loop_at = j
            break
        if assigned_names(outer[j]) & loss_texts or not (
            rule._is_bystander(outer[j], loss_texts) or rule._is_exit_guard(outer[j], loss_texts)
        ):
            return None
    if loop_at is None:
        return None
    start = next((j for j in range(loop_at - 1, -1, -1) if assigned_names(outer[j]) & loss_texts), None)
    if start is None or not _set_from_constants(outer[start], loss_texts):
        return None
    func = enclosing(rule.parents, guard, cst.FunctionDef)
    ignored = {self_name(func)} if func is not None and func.params.params else set()
    rescales = [stmt for stmt in body[: end + 1] if assigned_names(stmt) & loss_texts]
    between = outer[loop_at + 1 : outer.index(guard)] + [s for s in body[:end] if s not in rescales]
    feeding = _feeds_a_rescale(between, _read_texts(rescales) - loss_texts - ignored, ignored)
    if feeding is not None:
        rule.loss_loop_reason = (
            f" (line {rule.line_of(feeding)}, after the loop that sums the loss and outside the region autocast "
            "could take, calls what the rescale before the scaled backward reads)"
        )
        return None
    needed = _read_texts(outer[start : loop_at + 1]) - ignored
    first = _first_feeding_call(outer, start, needed, ignored)
    spans = [outer[min(start, first if first is not None else start) : loop_at + 1]]
    # up through the ifs that hold the loop, to the function's body: what feeds the loss there
    block, top = rule.parents.get(outer[loop_at]), func.body if func is not None else rule.tree
    while block is not top:
        owner = rule.parents.get(block)
        if _iteration_body(rule, owner, block):
            break
        if not isinstance(owner, cst.If) or owner.body is not block:
            rule.loss_loop_reason = (
                f" (the loss summed in the loop of line {rule.line_of(outer[loop_at])} is inside "
                f"{_kind(owner)}, before which what feeds it is not followed)"
            )
            return None
        stmts = _statements(rule.parents.get(owner))
        at = stmts.index(owner)
        needed |= _read_texts([owner.test]) - ignored
        first = _first_feeding_call(stmts, at, needed, ignored)
        if first is not None:
            spans.insert(0, stmts[first:at])
        block = rule.parents.get(owner)
    if not any(_computes(stmt) for span in spans for stmt in span):
        return None
    for stmt in (stmt for span in spans for stmt in span):
        if not _wrappable(rule, stmt):
            rule.loss_loop_reason = (
                f" (the loss summed in the loop of line {rule.line_of(outer[loop_at])} reads what line "
                f"{rule.line_of(stmt)} computes, in {_kind(stmt)} no autocast region can hold whole)"
            )
            return None
    if any(rule._inside_autocast(span[0]) for span in spans):
        return None
    members = [rule._unplanned(span) for span in spans]
    return None if None in members else members


def _iteration_body(rule: Any, owner: Any, block: Any) -> bool:
    """On the second look for a forward pass (``_amp_autocast``), the body of the training loop
    (STEP's ``for images, ... in loader:`` around its per-step loss loop): the climb for what
    feeds the loss stops there, and the region starts at the first statement of the iteration
    that computes it.  What the iteration reads from before the loop (built once, not by this
    step's forward pass) stays out of the region."""
    return bool(rule.second_look) and isinstance(owner, (cst.For, cst.While)) and owner.body is block and (
        not isinstance(owner, cst.For) or owner.asynchronous is None
    )


def _kind(node: Any) -> str:
    """``node`` in words, with its article (``a while loop``)."""
    kinds = {cst.For: "a for loop", cst.While: "a while loop", cst.Try: "a try statement", cst.With: "a with block",
             cst.If: "an if statement", cst.Else: "an else branch", cst.ExceptHandler: "an except handler",
             cst.Finally: "a finally block"}
    return kinds.get(type(node), "a compound statement")


def _feeds_a_rescale(stmts: List[Any], reads: set, ignored: set) -> Optional[Any]:
    """The first statement that stays outside the regions (between the loss's loop and its
    rescale) and computes something the rescale reads: fills it, or calls it or a method of it
    (``self.head(x)`` before ``total = total + self.head.aux``); None when there is none."""
    for stmt in stmts:
        if not _computes(stmt):
            continue
        if (_filled_texts(stmt) - ignored) & reads:
            return stmt
        for call in (n for n in walk(stmt) if isinstance(n, cst.Call)):
            # the object called and, for a method, the object it belongs to
            callees = [call.func] + ([call.func.value] if isinstance(call.func, cst.Attribute) else [])
            for text in {code_of(c) for c in callees} - ignored:
                if any(read == text or read.startswith(text + ".") for read in reads):
                    return stmt
    return None


def _statements(block: Any) -> List[Any]:
    return list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []


def _set_from_constants(stmt: Any, loss_texts: set) -> bool:
    """``total_loss = 0``: a simple assignment of the loss from a literal."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    return (
        isinstance(small, cst.Assign)
        and {code_of(t.target) for t in small.targets} <= loss_texts
        and isinstance(small.value, (cst.Integer, cst.Float))
    )


def _computes(stmt: Any) -> bool:
    """Whether ``stmt`` calls anything but torch's API, a plain builtin or a container method:
    a call that may run a forward pass (a model, a loss object, an injector)."""
    for node in walk(stmt):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Name) and func.value in _PLAIN_BUILTINS:
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in _PLAIN_METHODS:
            continue
        if code_of(func).startswith(("torch.", "nn.", "F.")):
            continue
        return True
    return False


def _read_texts(stmts: List[Any]) -> set:
    return {code_of(n) for s in stmts for n in walk(s) if isinstance(n, (cst.Name, cst.Attribute))}


def _filled_texts(stmt: Any) -> set:
    """What ``stmt`` binds or fills in place, at any depth (``x = ...``, ``state[k] = v``,
    ``state.update(out)``)."""
    from ._amp_autocast import _fills

    filled: set = set()
    for line in walk(stmt):
        if isinstance(line, cst.SimpleStatementLine):
            filled |= _fills(line)
    for node in walk(stmt):
        if isinstance(node, cst.For):
            filled |= {code_of(n) for n in walk(node.target) if isinstance(n, (cst.Name, cst.Attribute))}
    return filled


def _first_feeding_call(stmts: List[Any], at: int, needed: set, ignored: set) -> Optional[int]:
    """The index of the first statement before ``stmts[at]`` that calls something
    (``_computes``) and either fills what is read on the way to the loss (``needed``, grown in
    place by what each such statement reads) or makes a call whose result it drops (a forward
    pass run for what the model keeps); None when there is none."""
    first = None
    for j in range(at - 1, -1, -1):
        feeds = bool((_filled_texts(stmts[j]) - ignored) & needed)
        if feeds:
            needed |= _read_texts([stmts[j]]) - ignored
        if _computes(stmts[j]) and (feeds or _drops_a_call(stmts[j])) and not _initializes(stmts[j]):
            first = j
    return first


def _initializes(stmt: Any) -> bool:
    """``model, optimizer = amp.initialize(model, optimizer)``: it builds what the forward pass
    runs, and runs none (its own rule rewrites it)."""
    return any(isinstance(n, cst.Call) and code_of(n.func).split(".")[-1] == "initialize" for n in walk(stmt))


def _drops_a_call(stmt: Any) -> bool:
    """Whether ``stmt`` holds an expression statement whose call computes (``_computes``); a
    step or a backward is no forward pass (STEP's ``scheduler.step()`` at the top of its
    training iteration), and no region could hold it."""
    return any(
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and _computes(small)
        and not (isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value in _NOT_A_FORWARD)
        for line in walk(stmt)
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
    )


def _wrappable(rule: Any, stmt: Any) -> bool:
    """Whether an autocast region may hold ``stmt`` whole: no step, backward or definition,
    and a simple statement, a plain loop, an ``if`` or ``with`` the region may cover."""
    if rule._nests_or_steps(stmt, nests=False):
        return False
    if isinstance(stmt, cst.SimpleStatementLine):
        return True
    return bool(
        rule._is_plain_loop(stmt)
        or rule._rides_in_span(stmt)
        or rule._is_plain_with(stmt)
        or rule._is_grad_off_block(stmt)
    )
