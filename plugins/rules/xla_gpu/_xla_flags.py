"""What a value of ``TF_XLA_FLAGS`` does to XLA auto-clustering, as the code shows it.

TensorFlow reads ``TF_XLA_FLAGS`` when it builds its first graph optimization passes:
``--tf_xla_auto_jit=1``/``2``/``fusible``/``single-gpu(<level>)`` clusters the graph for XLA,
as ``global_jit_level`` does (``0`` is off, ``-1`` leaves it to the session config, which
NPU051 switches off), and ``--tf_xla_cpu_global_jit`` does it on the CPU too. NVIDIA's TF 1.x
scripts set the variable in code (``os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2"``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from npu_codemod.api import Base, tokens
from npu_codemod.api._toolkit import string_value

VARIABLE = "TF_XLA_FLAGS"
#: ``--tf_xla_auto_jit=<level>``, ``--tf_xla_cpu_global_jit[=<value>]`` (TensorFlow's flags
#: take their value after ``=``: a word after a space is the next flag).
_FLAG = re.compile(r"--?(tf_xla_auto_jit|tf_xla_cpu_global_jit)(?:=([^\s'\"]+))?")
#: Levels that leave auto-clustering off, and those known to switch it on.
_OFF = {"tf_xla_auto_jit": ("0", "-1"), "tf_xla_cpu_global_jit": ("false", "0")}
_ON = re.compile(r"[12]|fusible|single-gpu\([12]\)|true|1")


@dataclass(frozen=True)
class XlaFlags:
    """The auto-clustering flags a value of ``TF_XLA_FLAGS`` spells."""

    on: tuple[str, ...]  # the flags that switch it on (as written), maybe
    sure: bool  # each of ``on`` surely switches it on (its level is a literal one)
    off: bool  # some flag leaves it off explicitly
    shown: bool  # the code spells the value: a string, or strings and names (False: a name, a call)


def xla_flags(value: Base) -> XlaFlags:
    """The flags ``value`` (set to ``TF_XLA_FLAGS``) spells: its strings, read together."""
    whole = string_value(value)
    texts = [whole] if whole is not None else [_text(leaf) for leaf in value.leaves()
                                                if leaf.type == tokens.STRING]
    on, sure, off = [], True, False
    for match in _FLAG.finditer(" ".join(texts)):
        name, level = match.group(1), match.group(2)
        if level is not None and level.lower() in _OFF[name]:
            off = True
            continue
        on.append("--" + match.group(0).lstrip("-"))
        sure = sure and (level is None and name == "tf_xla_cpu_global_jit"
                         or level is not None and _ON.fullmatch(level.lower()) is not None)
    return XlaFlags(tuple(on), sure, off, bool(texts))


def _text(leaf: Base) -> str:
    """A string literal's text, else (an f-string) its code."""
    try:
        text = ast.literal_eval(leaf.value)
    except (SyntaxError, ValueError):
        return str(leaf.value)
    return text if isinstance(text, str) else str(leaf.value)
