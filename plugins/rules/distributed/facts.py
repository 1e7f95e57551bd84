"""The repository-wide facts of the distributed pack, gathered from every TensorFlow file
before any rewrite: how the repository trains distributed (``distribution_facts``), which
of its classes and functions build Estimators and Keras models (``model_facts``: NPU023 and
NPU027 act only on models the repository is shown to build), and which files keep Horovod
uses and import what from where (``horovod_facts``: NPU021 and NPU025), and which of its
module-level functions are named as a model's training methods (``own_function_facts``:
NPU027 leaves ``train_lib.train(...)`` to the Estimator inside), and which return hooks or
callbacks that hold a broadcast of the variables (``broadcast_function_facts``: NPU027 adds no
second one around ``utils.make_hooks()``)."""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import hookimpl
from npu_codemod.api._toolkit import distribution_facts, model_facts

from ._broadcast_functions import broadcast_function_facts
from .horovod_facts import horovod_facts
from .own_functions import own_function_facts


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    return distribution_facts(path, text) | model_facts(path, text) | horovod_facts(path, text) \
        | own_function_facts(path, text) | broadcast_function_facts(path, text) or None
