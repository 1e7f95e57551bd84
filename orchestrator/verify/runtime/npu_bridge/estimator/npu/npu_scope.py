"""``npu_scope``: scopes that only steer the NPU's compiler; nothing to do on the CPU."""

import contextlib


@contextlib.contextmanager
def without_npu_compile_scope():
    yield


@contextlib.contextmanager
def keep_dtype_scope():
    yield
