"""The analyses' fast text looks (``text_search.AnyOf`` and substring tests before a regular
expression) answer what the regular expressions they replaced answered (issue 32): on every
source the suite has and on generated text made of the patterns' own pieces, word characters
(ASCII and not) around them included."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import module_training, tf_programs
from npu_codemod.codemods.text_search import AnyOf
from npu_codemod.plugins.rules.sess_run import npu008_soft_placement
from npu_codemod.plugins.rules.tf2_distributed import _trained

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

PAIRS = {
    "training text": (_OLD_TRAINING_TEXT, tf_programs.TRAINING_TEXT.found),
    "module may train": (_OLD_MAY_TRAIN_WHEN_RUN, module_training.may_train_when_run),
    "trained may train": (_OLD_TRAINED_MAY_TRAIN, _trained._MAY_TRAIN.found),
    "internal modules": (_OLD_INTERNAL, npu008_soft_placement._INTERNAL.found),
    "main block": (tf_programs.MAIN, lambda text: "__main__" in text and tf_programs.MAIN.search(text) is not None),
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
    "\t", "\n", "x", "_", "9", "é", "ǅ", "#", "=",
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
