"""NPU067's first look at which names a file trains (``_trained._candidates``) finds what one
``findall`` of its regular expression over the whole text finds: it tries only the name before
each training call's (or variables') dot, on every suite source and on generated text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.plugins.rules.tf2_distributed import _trained

from support.sources import python_sources


def _long_way(text: str) -> frozenset[str]:
    return frozenset(_trained._CANDIDATE.findall(text))


def test_every_source_of_the_suite_gets_the_names_of_a_findall() -> None:
    sources = python_sources()
    assert [where for where, text in sources.items() if _trained._candidates(text) != _long_way(text)] == []
    assert sum(bool(_long_way(text)) for text in sources.values()) > 20


_PIECES = st.sampled_from([
    "model", "self.model", "net2", "_m", "x.compile", "2d", "é", "µ", ".", " ", "\n", "\t", "\u00a0", "\u2028",
    "(", ")", "=", "#", ".fit(", ".fit (", " .fit(", ". fit\n(", ".fit_generator(", ".compile(",
    ".train_on_batch(", ".trainable_variables", ".trainable_weights", ".trainable_variablesx",
    "  .  trainable_weights", "apply_gradients(zip(g, ", "tape.gradient(loss, ", ".fitx(", "fit(",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_generated_text_gets_the_names_of_a_findall(text: str) -> None:
    _trained._candidates.cache_clear()
    assert _trained._candidates(text) == _long_way(text)


def test_a_name_inside_a_match_is_not_tried_again() -> None:
    """``findall`` goes on after a match's end: the variables' name read by ``m . `` is not
    one, though it is a name before a training call."""
    text = "m .  trainable_variables.fit(x)\n"
    assert _long_way(text) == {"m"} == _trained._candidates(text)
