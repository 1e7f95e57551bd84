"""NPU006 gelu: functions computing the tanh GELU get the CANN body; everything else is left."""

from __future__ import annotations

import pytest

from support.rules import Golden, assert_migrates, assert_unchanged, sites

RULES = {"NPU006"}
HEAD = "import math\nimport numpy as np\nimport tensorflow as tf\n"
SQRT_2_PI = ["np.sqrt(2 / np.pi)", "math.sqrt(2.0 / math.pi)", "0.7978845608028654",
             "0.7978845608", "tf.sqrt(2 / np.pi)", "np.sqrt(2.0 / math.pi)"]
CUBE = ["tf.pow(x, 3)", "x * x * x", "x ** 3", "tf.pow(x, 3.0)", "np.power(x, 3)", "x * tf.square(x)"]
INLINE = ("GELU (tanh approximation) computed inline: replace it with npu_unary_ops.gelu({}) "
          "(guide: Model building, loss computation and gradient update: gelu, "
          "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu006-gelu)")


#: npu_unary_ops comes from this import: the engine adds it whatever rules run.
INIT = "from npu_bridge.npu_init import *\n"
NPU006 = Golden("NPU006", header=HEAD, added=INIT)


def test_the_guide_function_keeps_its_docstring() -> None:
    before = ('def gelu(x):\n'
              '  """Gaussian Error Linear Unit.\n\n'
              '  Args:\n    x: float Tensor to perform activation.\n  """\n'
              '  cdf = 0.5 * (1.0 + tf.tanh(\n'
              '      (np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3)))))\n'
              '  return x*cdf\n\n\n'
              'def model(h):\n  return gelu(h)\n')
    after = ('def gelu(x):\n'
             '  """Gaussian Error Linear Unit.\n\n'
             '  Args:\n    x: float Tensor to perform activation.\n  """\n'
             '  return npu_unary_ops.gelu(x)\n\n\n'
             'def model(h):\n  return gelu(h)\n')
    findings = NPU006.migrated(before, after, (4, 0))
    assert findings[0].message == ("replaced the tanh GELU formula with npu_unary_ops.gelu(x); "
                                   "callers are unchanged")


@pytest.mark.parametrize("constant", SQRT_2_PI)
@pytest.mark.parametrize("cube", CUBE)
def test_any_spelling_of_the_constants(constant: str, cube: str) -> None:
    before = f"def gelu(x):\n    return 0.5 * x * (1 + tf.tanh({constant} * (x + 0.044715 * {cube})))\n"
    NPU006.migrated(before, "def gelu(x):\n    return npu_unary_ops.gelu(x)\n", (4, 0))


@pytest.mark.parametrize("body", [
    "return x * 0.5 * (1.0 + tf.math.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))",
    "return (1 + tf.nn.tanh((x + 0.044715 * x * x * x) * math.sqrt(2 / math.pi))) * x / 2",
    "return 0.5 * x + 0.5 * x * tf.tanh(0.7978845608 * x + 0.0356774 * x ** 3)",
    "return tf.multiply(0.5 * x, 1.0 + tf.tanh(np.sqrt(2 / np.pi) * tf.add(x, 0.044715 * tf.pow(x, 3))))",
    "inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)\n    return 0.5 * x * (1 + tf.tanh(inner))",
    "x3 = tf.pow(x, 3)\n    inner = x + 0.044715 * x3\n    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * inner))\n    return x * cdf",
    "c = tf.cast(math.sqrt(2.0 / math.pi), x.dtype)\n    return 0.5 * x * (1.0 + tf.tanh(c * (x + 0.044715 * tf.pow(x, 3))))",
    "x = tf.convert_to_tensor(x)\n    return 0.5 * x * (1 + tf.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))",
])
def test_any_arrangement(body: str) -> None:
    NPU006.migrated(f"def gelu(x):\n    {body}\n", "def gelu(x):\n    return npu_unary_ops.gelu(x)\n", (4, 0))


def test_any_name_method_and_first_parameter() -> None:
    before = ("class Bert(object):\n"
              "\tdef activation(self, input_tensor, name=None):\n"
              "\t\t# tanh approximation\n"
              "\t\tt = input_tensor\n"
              "\t\treturn 0.5 * t * (1 + tf.tanh(0.7978845608 * (t + 0.044715 * t ** 3)))\n")
    after = ("class Bert(object):\n"
             "\tdef activation(self, input_tensor, name=None):\n"
             "\t\t# tanh approximation\n"
             "\t\treturn npu_unary_ops.gelu(input_tensor)\n")
    NPU006.migrated(before, after, (5, 1))


def test_one_line_function_and_crlf() -> None:
    before = "def gelu(x): return 0.5*x*(1+tf.tanh(0.7978845608*(x+0.044715*x**3)))  # fast\r\n\r\ny = gelu(1.0)\r\n"
    after = "def gelu(x): return npu_unary_ops.gelu(x)\r\n\r\ny = gelu(1.0)\r\n"
    findings = assert_migrates(HEAD.replace("\n", "\r\n") + before, INIT.replace("\n", "\r\n") + HEAD.replace("\n", "\r\n") + after, RULES)
    assert sites(findings) == [("NPU006", 4, 0, "migrated")]


def test_second_run_reports_migrated() -> None:
    findings = assert_unchanged(HEAD + 'def gelu(x):\n  """Doc."""\n  return npu_unary_ops.gelu(x)\n', RULES)
    assert sites(findings) == [("NPU006", 4, 0, "migrated")]


def test_with_npu001_the_init_import_is_added() -> None:
    before = HEAD + "def gelu(x):\n  return 0.5 * x * (1 + tf.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))\n"
    after = ("from npu_bridge.npu_init import *\n" + HEAD
             + "def gelu(x):\n  return npu_unary_ops.gelu(x)\n")
    assert_migrates(before, after, {"NPU006", "NPU001"})


# --- Reported, never rewritten ----------------------------------------------------------------


def test_inline_formula_outside_a_function() -> None:
    findings = NPU006.reported("h = 0.5 * h * (1 + tf.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * tf.pow(h, 3))))\n",
                               (4, 4))
    assert findings[0].message == INLINE.format("h")


@pytest.mark.parametrize("prelude, tanh", [
    ("", "np.tanh"), ("", "tf.nn.tanh"), ("", "tf.math.tanh"), ("", "math.tanh"),
    ("", "tf.compat.v1.tanh"), ("from math import tanh as th\n", "th"),
    ("nn = tf.nn\n", "nn.tanh"), ("from tensorflow import math as m\n", "m.tanh"),
])
def test_inline_formula_with_any_spelling_of_tanh(prelude: str, tanh: str) -> None:
    line = 4 + prelude.count("\n")
    NPU006.reported(f"{prelude}h = 0.5 * h * (1 + {tanh}(0.7978845608 * (h + 0.044715 * h ** 3)))\n", (line, 4))


def test_inline_formula_on_an_attribute() -> None:
    findings = NPU006.reported("self.out = 0.5 * self.h * (1 + tf.tanh(0.7978845608 * (self.h + 0.044715 * self.h ** 3)))\n",
                               (4, 11))
    assert findings[0].message == INLINE.format("self.h")


def test_function_doing_more_than_gelu_is_reported() -> None:
    source = ("def act(x):\n"
              "    tf.summary.histogram('act', x)\n"
              "    return 0.5 * x * (1 + tf.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))\n")
    NPU006.reported(source, (6, 11))


def test_cdf_factor_inline_is_reported() -> None:
    source = ("def block(x):\n"
              "    y = dense(x)\n"
              "    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * tf.pow(y, 3))))\n"
              "    return y * cdf\n")
    findings = NPU006.reported(source, (6, 10))
    assert "cdf factor" in findings[0].message and "npu_unary_ops.gelu(y)" in findings[0].message


def test_formula_of_another_parameter_is_reported() -> None:
    NPU006.reported("def f(x, y):\n    return 0.5 * y * (1 + tf.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))\n",
                    (5, 11))


def test_erf_form_is_reported() -> None:
    source = ("def gelu(x):\n"
              "    cdf = 0.5 * (1.0 + tf.math.erf(x / tf.sqrt(2.0)))\n"
              "    return x * cdf\n"
              "z = 0.5 * z * (1.0 + tf.erf(z / math.sqrt(2.0)))\n")
    findings = NPU006.reported(source, (5, 10), (7, 4))
    assert all("erf form" in f.message and "tanh approximation" in f.message for f in findings)


def test_lambda_is_reported() -> None:
    NPU006.reported("gelu = lambda x: 0.5 * x * (1 + tf.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))\n", (4, 17))


@pytest.mark.parametrize("body", [
    "return 0.5 * x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.04 * x ** 3)))",  # wrong constant
    "return 0.5 * x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 2)))",  # square
    "return x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))",  # no 0.5
    "return 0.5 * x * (1 - tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))",
    "return 0.5 * x * (1 + tf.sigmoid(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))",
    "return x * tf.sigmoid(1.702 * x)",
    "return tf.tanh(x)",
    "return 0.5 * x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))) + bias",
    "return 0.5 * x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))[0]",
    "return 0.5 * x * (1 + my.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))",
    "return 0.5 * x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3j)))",
    "return 0.5 * x * (1 + tf.tanh(math.sqrt(2 // math.pi) * (x + 0.044715 * x ** 3)))",
])
def test_near_misses_are_neither_rewritten_nor_reported(body: str) -> None:
    NPU006.reported(f"def gelu(x):\n    {body}\n")


def test_branching_gelu_reports_both_forms() -> None:
    source = ("def gelu(x, approximate=True):\n"
              "    if approximate:\n"
              "        return 0.5 * x * (1 + tf.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))\n"
              "    return 0.5 * x * (1 + tf.math.erf(x / math.sqrt(2.0)))\n")
    NPU006.reported(source, (6, 15), (7, 11))


def test_a_function_without_parameters_is_not_rewritten() -> None:
    NPU006.reported("def gelu():\n    return 0.5 * v * (1 + tf.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))\n", (5, 11))


def test_files_without_the_formula_are_untouched() -> None:
    # tf.nn.gelu is TF 2.x-only: the file is TF 2.x code (one NPU000 note), never a GELU site
    findings = assert_unchanged(HEAD + "def gelu(x):\n    return tf.nn.gelu(x)\n", RULES)
    assert [f.rule_id for f in findings] == ["NPU000"]
    assert assert_unchanged(HEAD + "def relu(x):\n    return tf.nn.relu(x)\n", RULES) == []
