"""The analyses' fast text looks (``text_search.AnyOf`` and substring tests before a regular
expression) answer what the regular expressions they replaced answered (issue 32): on every
source the suite has and on generated text made of the patterns' own pieces, word characters
(ASCII and not) around them included."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import (
    engine,
    horovod_params,
    local_names,
    module_training,
    names,
    tf_aliases,
    tf_programs,
)
from npu_codemod.codemods.text_search import AnyOf, LineStarts
from npu_codemod.plugins.rules.sess_run import npu008_soft_placement
from npu_codemod.plugins.rules.tf2_distributed import _own_steps, _trained

from support.sources import python_sources

#: The regular expressions as they were, and what now answers them (training text: no
#: ``tf.function`` since review round M3, Keras' ``fit_generator``/``train_on_batch`` added).
_OLD_TRAINING_TEXT = re.compile(r"\bGradientTape\b|\.apply_gradients\(|\.minimize\(|\.fit\(|"
                                r"\.compile\((?<!\bre\.compile\()(?<!\bregex\.compile\()"
                                r"(?<!\bpy_compile\.compile\()(?<!\bsre_compile\.compile\()|"
                                r"\.fit_generator\(|\.train_on_batch\(")
_OLD_MAY_TRAIN_WHEN_RUN = re.compile(r"\b(?:apply_gradients|compile|fit|fit_generator|minimize|GradientTape|"
                                     r"train_on_batch|train_step)\s*\(")
_OLD_TRAINED_MAY_TRAIN = re.compile(r"\s*\.\s*(?:fit|fit_generator|compile|train_on_batch)\s*\("
                                    r"|\s*\.\s*trainable_(?:variables|weights)\b")
_OLD_INTERNAL = re.compile(r"\btensorflow\.python\b")
#: Searched whole before the eighteenth round of issue 32 (a ``^`` under ``re.MULTILINE`` or a
#: ``\b`` tried at every position).
_OLD_MAIN = re.compile(r"""^if\s+(?:__name__\s*==\s*(['"])__main__\1|(['"])__main__\2\s*==\s*__name__)\s*:""",
                       re.MULTILINE)
_OLD_ALIAS_GATE = re.compile(r"^[ \t]*(?:(?:tf|tensorflow)\w*[ \t]*=[^=]|from[ \t]+\.*[\w.]*[ \t]+import[ \t][^\n#]*"
                             r"(?<![\w.])(?:tf|tensorflow|hvd|horovod)\w*|import[ \t]+horovod\b"
                             r"|from[ \t]+horovod[\w.]*[ \t]+import\b)", re.MULTILINE | re.IGNORECASE)


def _old_binding_shape(name: str) -> re.Pattern[str]:
    spelled = re.escape(name)
    return re.compile(r"\bdef\s+\w+\s*\((?:[^()]|\([^()]*\))*?[(,*\s]%s\s*[=,):]" % spelled
                      + r"|\blambda\b[^:\n]*\b%s\b" % spelled
                      + r"|\bfor\s+[\w\s,()\[\]]*?\b%s\b[\w\s,()\[\]]*?\bin\b" % spelled)


_OLD_ADAPTER = re.compile(r"\b(?:npu_bridge|npu_device|horovod)\b")

PAIRS = {
    "training text": (_OLD_TRAINING_TEXT, tf_programs.TRAINING_TEXT.found),
    "module may train": (_OLD_MAY_TRAIN_WHEN_RUN, module_training.may_train_when_run),
    "trained may train": (_OLD_TRAINED_MAY_TRAIN, _trained._MAY_TRAIN.found),
    "internal modules": (_OLD_INTERNAL, npu008_soft_placement._INTERNAL.found),
    "main block": (_OLD_MAIN, lambda text: "__main__" in text and tf_programs.MAIN.found(text)),
    "alias gate": (_OLD_ALIAS_GATE, tf_aliases._GATE.found),
    "imports TF": (names.IMPORTS_TF, names.IMPORTS_TF_TEXT.found),
    "imports horovod": (names.imports_module_pattern("horovod"), names.imports_module_text("horovod").found),
    "NPU adapters": (_OLD_ADAPTER, engine._ADAPTER.found),
    **{f"binding shape of {name}": (_old_binding_shape(name), local_names._binding_shape(name).found)
       for name in ("sess", "config", "name", "x")},
    "horovod star import": (horovod_params._STAR_IMPORT,
                            lambda text: "horovod" in text and horovod_params._STAR_IMPORT.search(text) is not None),
}


def test_the_training_pattern_is_the_one_it_was() -> None:
    assert tf_programs.TRAINING.pattern == _OLD_TRAINING_TEXT.pattern


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_every_source_of_the_suite_gets_the_old_answer(name: str) -> None:
    old, new = PAIRS[name]
    sources = python_sources()
    differ = [where for where, text in sources.items() if (old.search(text) is not None) != new(text)]
    assert differ == []
    assert sum(old.search(text) is not None for text in sources.values()) >= 3  # both answers occur


_PIECES = st.sampled_from([
    "GradientTape", "tf", ".", "function", "fit", "fit_generator", "compile", "re", "regex", "minimize",
    "apply_gradients", "train_on_batch", "train_step", "trainable_variables", "trainable_weights",
    "tensorflow", "python", "__main__", "__name__", "if", "==", "'", '"', ":", "@", "(", ")", " ",
    "\t", "\n", "x", "_", "9", "é", "ǅ", "#", "=", "from", "import", "tf", "TF", "hvd", "horovod", "Horovod",
    "npu_bridge", "npu_device", "*", ";", ".", "\r", "\\", "ſ", "def", "lambda", "for", "in", "sess",
    "config", ",", "[", "]", "f",
])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_generated_text_gets_the_old_answer(text: str) -> None:
    for old, new in PAIRS.values():
        assert (old.search(text) is not None) == new(text), text


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["ab", "b", "a", " ", "_", "é", "1", "("]), max_size=10).map("".join))
def test_an_alternative_at_a_word_start_is_found_where_the_whole_pattern_is(text: str) -> None:
    alternatives = (r"\bab?\(", r"\bb\b", r"a_")
    assert AnyOf(*alternatives).found(text) == (re.search("|".join(alternatives), text) is not None)


def test_a_word_start_is_looked_for_past_places_that_are_none() -> None:
    """The first places the pattern matches are inside words: the search goes on past them."""
    gate = AnyOf(r"\bfit\(")
    assert not gate.found("benefit( profit(")
    assert gate.found("benefit( profit( fit(")
    assert gate.found("fit(")


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "^", "\n", "\r", " ", "x", "é", "(", "\\"]), max_size=10).map("".join),
       st.sampled_from([0, re.IGNORECASE, re.DOTALL, re.VERBOSE]))
def test_an_alternative_at_a_line_start_is_found_where_the_whole_pattern_is(text: str, flags: int) -> None:
    """``^`` under ``re.MULTILINE``: at the text's start and after each ``\\n``, nowhere else
    (not after a lone ``\\r``); a lookbehind at the line's start sees the ``\\n``."""
    alternatives = (r"^a+b?", r"^(?<!\n)x", r"^(?<=\n)b", r"^[ ]*\(", r"\bab\b", r"^$")
    for flags_used in (flags | re.MULTILINE,):
        for alternative in alternatives:
            expected = re.search(alternative, text, flags_used) is not None
            assert AnyOf(alternative, flags=flags_used).found(text) == expected, (alternative, text)
        expected = re.search("|".join(alternatives), text, flags_used) is not None
        assert AnyOf(*alternatives, flags=flags_used).found(text) == expected, text


def test_a_line_start_without_multiline_is_the_texts_start_only() -> None:
    gate = AnyOf(r"^ab")
    assert gate.found("ab\n")
    assert not gate.found("x\nab")
    assert AnyOf(r"^ab", flags=re.MULTILINE).found("x\nab")
    assert not AnyOf(r"^ab", flags=re.MULTILINE).found("x\rab")


#: Line-start patterns whose matches are read (``finditer``), tried at every position before the
#: nineteenth round of issue 32, and what now gives their matches.
_OLD_MATCHES = {
    "NPU008 TF alias": (re.compile(r"^[ \t]*import[ \t]+tensorflow(?:\.compat\.v1)?(?:[ \t]+as[ \t]+(\w+))?", re.M),
                        npu008_soft_placement._ALIAS),
    "NPU008 from TF": (re.compile(r"^[ \t]*from[ \t]+tensorflow(?:\.compat\.v1)?[ \t]+import[ \t]+"
                                  r"(\([^)]*\)|[^#\n]*)", re.M), npu008_soft_placement._FROM),
    "NPU068 class": (re.compile(r"^class\s+(\w+)\b[^\n]*:", re.MULTILINE), _own_steps._CLASS),
}


def _read(matches) -> list[tuple[object, int]]:
    """What the callers read of each match: its groups and where it ends."""
    return [(match.groups(), match.end()) for match in matches]


@pytest.mark.parametrize("name", sorted(_OLD_MATCHES))
def test_line_start_matches_are_the_old_ones_on_every_source(name: str) -> None:
    old, new = _OLD_MATCHES[name]
    sources = python_sources()
    differ = [where for where, text in sources.items() if _read(old.finditer(text)) != _read(new.finditer(text))]
    assert differ == []
    assert sum(old.search(text) is not None for text in sources.values()) >= 3


_LINE_PIECES = st.sampled_from([
    "class", "import", "from", "tensorflow", ".compat.v1", " as ", "tf", "device", "(", ")", ":", " ",
    "\t", "\n", "\r", "#", ",", "x", "é", "Model", "\\",
])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=14).map("".join))
def test_line_start_matches_of_generated_text_are_the_old_ones(text: str) -> None:
    for old, new in _OLD_MATCHES.values():
        assert _read(old.finditer(text)) == _read(new.finditer(text)), text
    spanning = LineStarts(r"a\s+(b)")  # a match may span lines: the next one starts past it
    assert _read(spanning.finditer(text)) == _read(re.finditer(r"^a\s+(b)", text, re.M))


def test_line_starts_resume_past_a_match_that_spans_lines() -> None:
    text = "a\nb x\na\n\nb\nb"
    found = LineStarts(r"[ab]\s+([ab])").finditer(text)
    assert _read(found) == _read(re.finditer(r"^[ab]\s+([ab])", text, re.M)) == [(("b",), 3), (("b",), 10)]
