"""NPU006's ``_ast_sites`` (``_gelu_sites``, issue 32): the unit layout gives ``@tanh``/``@erf``
only to units holding a ``tanh``/``erf`` call whose argument the GELU compiler may read, so the
mark must accept every call a GELU the rule reports or rewrites goes through. Checked against
the rule itself on fissix's tree (the whole file parsed) for GELUs in every spelling the
compiler reads, with pieces replaced by code it rejects, and the engine's selective outcome
against the full one."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import units
from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine
from npu_codemod.codemods.names import PUBLIC_NAMES
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules
from npu_codemod.plugins.rules.sess_run import _gelu_sites
from npu_codemod.plugins.rules.sess_run._formulas import FUNCTIONS

RULES = default_rules(load_plugins().rules())
(NPU006,) = [rule for rule in RULES if rule.id == "NPU006"]
ONLY = Engine([NPU006], FULL)
HEADER = ("import math\nimport numpy as np\nimport scipy.special\nimport tensorflow as tf\n"
          "from tensorflow import tanh as th\n\n\ndef conv(x):\n    return tf.nn.relu(x)\n\n\n")

#: The slots of a GELU and what fills each: spellings the compiler reads, then code it rejects.
TANH = ["tf.tanh", "tf.math.tanh", "tf.nn.tanh", "np.tanh", "math.tanh", "th"]
ERF = ["tf.erf", "tf.math.erf", "math.erf", "scipy.special.erf"]
SQRT_2_PI = ["np.sqrt(2 / np.pi)", "math.sqrt(2.0 / math.pi)", "0.7978845608", "tf.sqrt(2.0 / np.pi)",
             "tf.cast(math.sqrt(2 / math.pi), tf.float32)"]
CUBE = ["tf.pow(x, 3)", "x ** 3", "x * x * x", "np.power(x, 3)", "tf.square(x) * x", "pow(x, 3)",
        "tf.math.pow(x, 3)", "tf.multiply(x, tf.square(x))"]
REJECTED = ["tf.matmul(x, w)", "tf.sigmoid(x)", "x // 3", "m.f(x)", "(x, 3)", "x if t else 3",
            "x.t()", "a[0].b", "~x", "x @ w", "3j", "'s'", "True", "x < 3", "g(x)(x)", "[x]",
            "tf.pow(x)", "tf.tanh(x, *a)", "tf.square(**a)", "m.f(x)[0]", "tf.pow(x=x, y=3)"]
SLOT = {"sqrt": SQRT_2_PI, "cube": CUBE, "half": ["0.5", "1 / 2", "tf.constant(0.5)"]}
FORMS = [
    "    y = {half} * x * (1.0 + {tanh}({sqrt} * (x + 0.044715 * {cube})))\n",
    "    cdf = {half} * (1.0 + {tanh}({sqrt} * (x + 0.044715 * {cube})))\n    y = x * cdf\n",
    "    inner = {sqrt} * (x + 0.044715 * {cube})\n    y = {half} * x * (1.0 + {tanh}(inner))\n",
    "    y = x * {half} * (1.0 + {erf}(x / math.sqrt(2.0)))\n",
    "    y = {half} * x * (1.0 + {tanh}(value={sqrt} * (x + 0.0356774 * {cube} / 0.7978845608)))\n",
]


def _fill(form: str, chosen: dict[str, str]) -> str:
    return form.format(**chosen)


SLOTS = st.fixed_dictionaries({
    "tanh": st.sampled_from(TANH), "erf": st.sampled_from(ERF),
    **{slot: st.one_of(st.sampled_from(values), st.sampled_from(REJECTED)) for slot, values in SLOT.items()},
})


def _inline(body: str) -> str:
    return f"{HEADER}def act(x, w, t, a, f, g, m):\n    z = f(x)\n{body}    return y + z\n"


def _function(body: str) -> str:
    return f"{HEADER}def gelu(x):\n{body}    return y\n"


def _reported(text: str) -> bool:
    return any(finding.rule_id == "NPU006" for finding in ONLY.process(text.encode(), "model.py").findings)


def _marked(text: str) -> bool:
    """Does the layout give the unit after ``conv`` (the one under test) a site name of NPU006?"""
    layout = units.module_layout(text, NPU006._ast_sites)
    assert layout is not None
    names = units.spelled_names(layout, frozenset(NPU006._site_names_for(frozenset())))
    return bool(layout.units[-1].words & names)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FORMS), SLOTS, st.booleans())
def test_every_gelu_the_rule_reports_is_marked(form: str, chosen: dict[str, str], inline: bool) -> None:
    text = (_inline if inline else _function)(_fill(form, chosen))
    if _reported(text):
        assert _marked(text)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("wrap", [_inline, _function])
def test_the_gelus_are_reported_and_marked(form: str, wrap) -> None:
    text = wrap(_fill(form, {"tanh": "tf.tanh", "erf": "tf.erf", "sqrt": SQRT_2_PI[0],
                             "cube": CUBE[0], "half": "0.5"}))
    assert _reported(text) and _marked(text)


@pytest.mark.parametrize("body", [
    "    y = tf.tanh(tf.matmul(x, w) + t)\n",  # an RNN's candidate state
    "    y = tf.sigmoid(x) * tf.tanh(tf.layers.dense(x, 4))\n",
    "    y = tf.tanh(x @ w) if t else tf.tanh(x % w)\n",
    "    y = tf.nn.tanh(m.g(x)) + np.tanh(f(x) // 2)\n",
    "    y = tf.tanh(tf.reduce_sum(x, axis=1)) + tf.erf(tf.reduce_max(x))\n",
    "    y = tf.layers.dense(x, 4, activation=tf.tanh)\n",  # no call: no site
    "    y = tf.tanh(*a) + tf.math.tanh(x=m.f(x)) + tf.tanh()\n",
])
def test_calls_that_cannot_compute_a_gelu_are_not_marked(body: str) -> None:
    text = _inline(body)
    assert not _reported(text) and not _marked(text)


@pytest.mark.parametrize("body", [
    "    y = tf.tanh(x)\n",  # the argument may be anything the file assigned: read it
    "    y = 0.5 * x * (1 + tf.tanh(h[0] * self_h))\n",
    "    y = x * tf.erf(f.g)\n",
])
def test_calls_of_arithmetic_are_marked(body: str) -> None:
    assert _marked(_inline(body))


def test_the_compiler_reads_each_last_name_as_one_kind() -> None:
    """``_arity`` reads a dotted call by its last name: each last name of ``FUNCTIONS`` must
    name one kind, the kinds NPU006 starts from must be their own last names, and no public
    name of an internal one may end in a function's last name its own does not."""
    kinds: dict[str, set[str]] = {}
    for name, kind in FUNCTIONS.items():
        kinds.setdefault(name.rpartition(".")[2], set()).add(kind)
    assert all(len(found) == 1 for found in kinds.values())
    assert all(name.rpartition(".")[2] == kind for name, kind in FUNCTIONS.items()
               if kind in _gelu_sites.STARTS)
    assert not [internal for internal, public in PUBLIC_NAMES.items()
                if public.rpartition(".")[2] in kinds
                and internal.rpartition(".")[2] != public.rpartition(".")[2]]


def test_a_mark_rejects_only_what_the_compiler_rejects() -> None:
    """Each rejected piece, alone as the argument of ``tf.tanh``, is not marked; each accepted
    one is."""
    def marked(argument: str) -> bool:
        call = ast.parse(f"tf.tanh({argument})", mode="eval").body
        assert isinstance(call, ast.Call)
        return _gelu_sites.may_compute_gelu("tanh", call)
    assert not [piece for piece in REJECTED if marked(piece)]
    assert all(marked(piece) for values in SLOT.values() for piece in values)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FORMS), SLOTS, st.booleans())
def test_a_selective_run_gives_what_a_full_one_does(form: str, chosen: dict[str, str], inline: bool) -> None:
    data = (_inline if inline else _function)(_fill(form, chosen)).encode()
    selective = Engine(RULES, SELECTIVE, plan_every_file=True)
    assert selective.process(data, "model.py") == Engine(RULES, FULL).process(data, "model.py")
