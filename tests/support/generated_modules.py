"""Top-level groups of generated modules, for the property tests that compare two readings of
one module (the hand-over's record and its readers, the unit layout's two scans)."""

from __future__ import annotations

from typing import Sequence


def top_level(shape: str, body: Sequence[str], function: str = "def f(a, b=tf):") -> str:
    """The statements ``body`` as one top-level group of ``shape``: ``run`` (module-level
    statements), ``def`` (the body of ``function``, a header line), ``class`` (a method of a
    Keras model), ``decorated`` (a ``tf.function``) or ``main`` (the ``__main__`` block)."""
    if shape == "run":
        return "".join(f"{line}\n" for line in body)
    indented = "".join(f"    {line.replace(chr(10), chr(10) + '    ')}\n" for line in body)
    if shape == "def":
        return f"{function}\n{indented}"
    if shape == "class":
        return f"class C(tf.keras.Model):\n    def call(self, x):\n    {indented.replace(chr(10) + '    ', chr(10) + '        ')}"
    if shape == "decorated":
        return f"@tf.function\ndef g(x):\n{indented}"
    if shape == "main":
        return f'if __name__ == "__main__":\n{indented}'
    raise ValueError(f"no such shape: {shape}")
