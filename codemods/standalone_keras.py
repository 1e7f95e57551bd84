"""Training with standalone Keras (``import keras``) on TensorFlow.

Keras 2.2 ran on a TensorFlow backend: ``model.fit(...)`` of ``from keras.models import Model``
trains in a TensorFlow session, which the NPU must configure, and ``K.clear_session()`` of
``import keras.backend as K`` must become ``npu_clear_session()``. The rules read TensorFlow's
own names (``tf.keras``), so such a file would be left alone in silence, the repository
``ready``: one that imports no TensorFlow is ``non-tf``, and in one that does (``import
tensorflow as tf`` beside ``from keras.models import Model``) NPU041 sees no Keras model of
TensorFlow's. It is not migrated; one finding at its first training call says what to
add by hand (NPU041 and NPU042's lines), unless its folder runs TensorFlow 2 (where Keras is
``tf.keras``'s and the ``tf2`` pack's business). A file that imports TensorFlow is left to
the rules when it names TensorFlow's Keras too (NPU041's) or sets the Keras session itself
(``K.set_session(tf.Session(...))``: NPU007 configures that session).

Where its folder runs TensorFlow 2 the file is reported too, with other words: the TF 2.x rules
read TensorFlow's names as well (NPU068's compile and optimizers, NPU067's models, NPU061's
training programs), so a TF 2.6 repository training with ``import keras`` (Keras 2.6, which is
``tf.keras``) came out unchanged and ``ready``; and Keras 3 (``keras.ops``, ``KERAS_BACKEND``,
TensorFlow 2.16 and later) does not run on TensorFlow 2.6, which TF Adapter 2.x is built for. A
pinned TensorFlow 2 is the backend even when no file imports TensorFlow; Keras 3 set to another
backend (``KERAS_BACKEND = "jax"``) trains no TensorFlow model. Each file's analysis gives::

    keras-standalone:<path>|<line>     a file that imports Keras and trains a model
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

from .tf_scopes import FILE_FACT
from .tf_versions import RUNTIME_TF2, runtime_of

FACT = "keras-standalone:"
#: ``import keras``, ``import keras.backend as K``, ``from keras.models import Model``: the module.
_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+(keras(?:\.[\w.]+)?)\b|from[ \t]+(keras(?:\.[\w.]+)?)[ \t]+import\b)",
                     re.MULTILINE)
_IMPORT_BYTES = re.compile(_IMPORT.pattern.encode(), re.MULTILINE)
#: Keras modules that build, compile or run a model (not ``keras.datasets``, whose
#: ``ImageDataGenerator.fit`` of ``keras.preprocessing`` computes statistics, trains nothing).
_MODEL_MODULES = ("keras.models", "keras.layers", "keras.backend", "keras.applications", "keras.engine",
                  "keras.optimizers", "keras.callbacks")
#: A model built through ``import keras`` alone (``keras.models.Sequential(...)``), or a class of
#: one (``class GAN(keras.Model)``: Keras 3's examples).
_BUILT = re.compile(r"\b(?:Model|Sequential|load_model)[ \t]*\(|\bkeras\.Model\b")
#: ``from keras import layers``: the modules of :data:`_MODEL_MODULES` imported by name.
_FROM_KERAS = re.compile(r"^[ \t]*from[ \t]+keras[ \t]+import\b[^\n]*\b(?:models|layers|backend|"
                         r"applications|optimizers|callbacks|Model|Sequential)\b", re.MULTILINE)
#: A Keras training call (NPU041's: ``.fit``, ``.fit_generator``, ``.train_on_batch``).
_TRAINING = re.compile(r"\.(?:fit|fit_generator|train_on_batch)[ \t]*\(")
#: TensorFlow's own Keras (``tf.keras.Model``, ``from tensorflow import keras``): NPU041's.
_TF_KERAS = re.compile(r"\b(?:tf|tensorflow)(?:\.compat\.v[12])?(?:\.python)?\.keras\b|"
                       r"^[ \t]*from[ \t]+tensorflow(?:\.python)?[ \t]+import\b[^\n]*\bkeras\b",
                       re.MULTILINE)
#: A session the file sets itself (``K.set_session(sess)``), whose config NPU007 writes.
_SETS_SESSION = re.compile(r"\bset_session[ \t]*\(")
#: The session configured by hand already (the finding's advice followed).
_CONFIGURED = re.compile(r"\bset_keras_session_npu_config[ \t]*\(")
MESSAGE = ("trains with standalone Keras (`import keras`) on the TensorFlow backend: not migrated "
           "(the rules read TensorFlow's names, tf.keras); by hand: `from npu_bridge.npu_init "
           "import *`, `npu_keras_sess = set_keras_session_npu_config()` before training and "
           "`close_session(npu_keras_sess)` after, `K.clear_session()` -> `npu_clear_session()`")
MESSAGE_TF2 = ("trains with standalone Keras (`import keras`), whose models and optimizers the TF "
               "2.x rules do not migrate (they read tf.keras); TF Adapter 2.x runs TensorFlow 2.6, whose Keras is "
               "tf.keras 2.6: use `from tensorflow import keras` (port Keras 3 code, keras.ops or "
               "KERAS_BACKEND, to it first) and run npu-codemod again")
#: Keras 3 set to a backend that is not TensorFlow: ``os.environ["KERAS_BACKEND"] = "jax"``.
_OTHER_BACKEND = re.compile(r"KERAS_BACKEND['\"]\s*\]\s*=\s*['\"](?!tensorflow['\"])")


def may_use_keras(data: bytes) -> bool:
    """Does the file (its bytes) import standalone Keras?"""
    return b"keras" in data and _IMPORT_BYTES.search(data) is not None


def keras_fact(path: str, text: str, imports_tf: bool = False) -> Optional[str]:
    """The ``keras-standalone:`` fact of a file, or None when it imports no Keras module that
    makes or runs a model, calls no training method, or configures the session by hand
    already; for a file that imports TensorFlow (``imports_tf``), also when it names
    TensorFlow's Keras or sets the Keras session itself (the rules' business: see the module
    docstring). A comment may count: a report, never a rewrite."""
    if "keras" not in text or _CONFIGURED.search(text) or _OTHER_BACKEND.search(text):
        return None
    if imports_tf and (_TF_KERAS.search(text) or _SETS_SESSION.search(text)):
        return None
    modules = {first or second for first, second in _IMPORT.findall(text)}
    if not any(module.startswith(_MODEL_MODULES) for module in modules) \
            and not ("keras" in modules and (_BUILT.search(text) or _FROM_KERAS.search(text))):
        return None  # Keras for data only (``keras.datasets``, ``keras.preprocessing``)
    found = _TRAINING.search(text)
    if found is None:
        return None
    return f"{FACT}{path}|{text.count(chr(10), 0, found.start()) + 1}"


def keras_findings(facts: Iterable[str], decided: frozenset[str]) -> list[tuple[str, int, str]]:
    """``(path, line, message)`` of each such file of a repository: where its folder runs
    TensorFlow 2 (``decided``: the facts with each scope's runtime), the TF 2.x words; else,
    when the repository uses TensorFlow (its per-file ``facts`` name a TensorFlow file), the
    TF 1.x session lines (no TensorFlow file: Keras on Theano or CNTK)."""
    facts = list(facts)
    uses_tf = any(fact.startswith(FILE_FACT) for fact in facts)
    found = []
    for fact in facts:
        if fact.startswith(FACT):
            path, _, line = fact[len(FACT):].rpartition("|")
            if runtime_of(decided, path) == RUNTIME_TF2:
                found.append((path, int(line), MESSAGE_TF2))
            elif uses_tf:
                found.append((path, int(line), MESSAGE))
    return sorted(found)
