"""The on/off switch the migration writes is a real bool: which expressions are provably one,
and ``bool(...)`` around the others (torch.autocast raises TypeError on enabled=None/""/0)."""

from __future__ import annotations

import libcst as cst
import pytest

from migrate.rules._bool_switch import as_bool, is_provably_bool, scope_at


def _in_function(body: str, expr: str) -> bool:
    """Whether ``expr`` is provably a bool inside ``def f(args, flag): <body>``."""
    module = cst.parse_module(f"def f(args, flag):\n{body}    x = {expr}\n")
    func = module.body[0]
    assert isinstance(func, cst.FunctionDef)
    assign = func.body.body[-1].body[0]  # type: ignore[attr-defined]
    return is_provably_bool(assign.value, func)


@pytest.mark.parametrize(
    "expr",
    [
        'args.opt_level != "O0"',
        "args.level == 1",
        "args.steps < 10",
        '"O1" in levels',
        "args.opt_level is not None",
        "not args.fp16",
        "bool(args.fp16)",
        "isinstance(args.fp16, bool)",
        "True",
        "False",
        '(args.fp16 is True) and args.opt_level != "O0"',
        "not args.cpu or args.level > 0",
        "(args.a == 1) if args.b else False",
    ],
)
def test_provably_bool_forms(expr):
    assert is_provably_bool(cst.parse_expression(expr))
    assert as_bool(expr) == expr


@pytest.mark.parametrize(
    "expr",
    [
        "args.fp16",
        'args.fp16 and args.opt_level != "O0"',
        'args.opt_level != "O0" and args.fp16',
        "args.fp16 or False",
        "cfg.get('use_fp16', False)",
        "int(args.fp16)",
        "args.opt_level",
        "use_amp",  # no scope given: a bare name proves nothing
        "1",
        '""',
        "None",
        "args.a if args.b else None",
    ],
)
def test_not_provably_bool_forms(expr):
    assert not is_provably_bool(cst.parse_expression(expr))
    assert as_bool(expr) == f"bool({expr})"


def test_wrapping_is_idempotent():
    once = as_bool('args.fp16 and args.opt_level != "O0"')
    assert as_bool(once) == once


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('    use_amp = args.opt_level != "O0"\n', True),
        ("    use_amp = not args.cpu\n    if args.force:\n        use_amp = True\n", True),
        ("    use_amp = args.fp16\n", False),
        ("    use_amp = True\n    if args.x:\n        use_amp = args.fp16\n", False),
        ("    use_amp = True\n    use_amp &= args.fp16\n", False),  # augmented: any value
        ("    use_amp: bool = args.level > 0\n", True),
        ("    for use_amp in (True, False):\n        pass\n", False),  # a loop target
        ("    use_amp = True\n    with ctx() as use_amp:\n        pass\n", False),
        ("    global use_amp\n    use_amp = True\n", False),
        ("    pass\n", False),  # assigned elsewhere (a global): unknown
        ("    def inner():\n        use_amp = True\n", False),  # a nested function's is its own
        ("    a = args.level > 0\n    use_amp = a and not args.cpu\n", True),  # through another name
        ("    use_amp = other\n    other = use_amp\n", False),  # a cycle proves nothing
    ],
)
def test_names_assigned_in_the_function(body, expected):
    assert _in_function(body, "use_amp") is expected


def test_a_parameter_is_not_provably_bool():
    assert not _in_function("    flag = True\n", "flag")


def test_module_scope_names():
    module = cst.parse_module('USE_AMP = LEVEL != "O0"\nx = USE_AMP\n')
    value = module.body[1].body[0].value  # type: ignore[attr-defined]
    assert is_provably_bool(value, module)
    module = cst.parse_module("try:\n    import apex\n    HAS = True\nexcept ImportError:\n    HAS = None\nx = HAS\n")
    assert not is_provably_bool(module.body[-1].body[0].value, module)  # type: ignore[attr-defined]


def _switch_in(code: str) -> bool:
    """Whether the value of the last statement of ``train`` in ``code`` is provably a bool,
    its names looked up through ``scope_at``."""
    module = cst.parse_module(code)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    parents = wrapper.resolve(cst.metadata.ParentNodeProvider)
    train = next(n for n in parents if isinstance(n, cst.FunctionDef) and n.name.value == "train")
    last = train.body.body[-1]
    return is_provably_bool(last.body[0].value, scope_at(parents, last))  # type: ignore[attr-defined]


APEX_PROBE = "try:\n    from apex import amp\n    mixed = True\nexcept ImportError:\n    mixed = False\n"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # a module global set only to True/False (yolov5's apex probe)
        (APEX_PROBE + "def train():\n    x = mixed\n", True),
        # a function of the module may rebind it to anything
        (APEX_PROBE + "def off():\n    global mixed\n    mixed = None\ndef train():\n    x = mixed\n", False),
        # the function's own binding hides the global
        (APEX_PROBE + "def train(mixed):\n    x = mixed\n", False),
        (APEX_PROBE + "def train():\n    mixed = opts.fp16\n    x = mixed\n", False),
        # an enclosing function's binding
        ("def outer(a):\n    on = a > 0\n    def train():\n        x = on\n    return train\n", True),
        ("def outer(on):\n    def train():\n        x = on\n    return train\n", False),
        # an import binds it to something unknown
        ("from config import mixed\ndef train():\n    x = mixed\n", False),
        # bound nowhere
        ("def train():\n    x = mixed\n", False),
    ],
)
def test_names_from_enclosing_scopes(code, expected):
    assert _switch_in(code) is expected


def test_scope_at_lists_the_functions_then_the_module():
    module = cst.parse_module("class C:\n    def f(self):\n        def g():\n            x = 1\ny = 2\n")
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    parents = wrapper.resolve(cst.metadata.ParentNodeProvider)
    cls = module.body[0]
    f = cls.body.body[0]  # type: ignore[attr-defined]
    g = f.body.body[0]
    assert scope_at(parents, g.body.body[0]) == [g, f, module]  # the class body is skipped
    assert scope_at(parents, module.body[1]) == [module]
