"""Does a file's Keras training run on a model a function of its repository returns?

The E signal of ``spec/rules-tf2.md`` counts Keras ``compile``/``fit``/``train_on_batch`` "on a
model the file builds (NPU027's definition)", and that definition takes "a call of a function of
the repository that returns one": ``model = small_net()`` with ``small_net`` in ``nets.py``, or
through a helper of the file itself (``get_model()``, which calls ``small_net()``). One file read
alone cannot tell: ``tf_versions`` keeps such a file's training and the calls it makes
(:attr:`Signals.training`, :attr:`Signals.model_calls`), and this module answers from the
repository's ``model-function:`` and ``class:`` facts (``built_models.model_facts``, gathered
from every TensorFlow file, as NPU027 reads them): once in the analysis, for the repository's
runtime and import graph (:func:`trained_files`, with the :func:`pending_fact` each such file
gives), and once in the engine, for the file's kind (:func:`signals_in`), with the same facts.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import FrozenSet, Iterable, Optional

from .built_models import KERAS, ModelFacts
from .tf_versions import Signals, keras_training_calls

#: A file whose training awaits the repository's model facts:
#: ``tf-keras-training@<call>,<call>...|<path>``, read and dropped when the runtimes are decided.
PENDING_FACT = "tf-keras-training@"
#: A file importing no TensorFlow whose Keras training runs on a model of the repository's
#: (``from lib.models import Net``; ``Net`` builds a ``tf.keras`` model): ``tf-keras-script:<path>``.
#: Under TF 1.x it trains in ``tf.keras``'s session, which NPU041 configures there too
#: (``Rule.script_fact``); the TF 2.x pack makes it an entry instead (``tf_programs``).
KERAS_SCRIPT_FACT = "tf-keras-script:"


def pending_fact(path: str, signals: Signals) -> Optional[str]:
    """The :data:`PENDING_FACT` of the file at ``path``, or None when its signals need none."""
    if signals.training is None:
        return None
    return f"{PENDING_FACT}{','.join(signals.model_calls)}|{path}"


def script_pending_fact(path: str, text: str) -> Optional[str]:
    """The :data:`PENDING_FACT` of a file at ``path`` that imports no TensorFlow (``text``), or
    None when it makes no Keras training call: its training, like a TensorFlow file's, is TF 2.x
    training when one of its calls returns a Keras model (``models.build()``), and then makes it
    an entry of the program (``tf_programs``)."""
    calls = keras_training_calls(text, path)
    return f"{PENDING_FACT}{','.join(calls)}|{path}" if calls else None


def trains_a_repository_model(calls: Iterable[str], path: str, facts: FrozenSet[str]) -> bool:
    """Does one of ``calls`` (module-qualified) of the file at ``path`` make a Keras model, as
    the repository's ``facts`` say?"""
    models = _models(facts)
    return any(models.kind(call, path, reexported=True) == KERAS or KERAS in models.element_kinds(call, path)
               for call in calls)


@lru_cache(maxsize=2)
def _models(facts: FrozenSet[str]) -> ModelFacts:
    """The model facts of a repository, read once for all its files (a frozenset keeps its hash)."""
    return ModelFacts(facts)


def trained_files(facts: FrozenSet[str]) -> frozenset[str]:
    """The paths of the files whose :data:`PENDING_FACT` the repository's ``facts`` resolve:
    files with only the E signal."""
    found = set()
    for fact in facts:
        if fact.startswith(PENDING_FACT):
            calls, _, path = fact[len(PENDING_FACT):].rpartition("|")
            if trains_a_repository_model(calls.split(","), path, facts):
                found.add(path)
    return frozenset(found)


def signals_in(signals: Signals, path: str, facts: FrozenSet[str]) -> Signals:
    """The signals of the file at ``path`` in the repository with ``facts``: its training is E
    when it trains a model of a repository function."""
    if signals.training is None or not trains_a_repository_model(signals.model_calls, path, facts):
        return signals
    return replace(signals, e=signals.training)
