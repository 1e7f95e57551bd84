"""What a fetched value or a variable is, written so that two runs can be compared.

A value becomes ``[name, kind, shape, numbers, digest]``: ``kind`` ``"f"`` (floating point:
``numbers`` holds every element of a small array, else the sum of magnitudes, the sum of
squares, the minimum, the maximum and evenly spaced elements, compared within the
tolerance), ``"i"`` (integers and booleans: compared exactly, ``numbers`` for a small array,
else ``digest``), ``"o"`` (anything else: strings, bytes: ``digest``).
"""

import hashlib

#: Arrays up to this many elements are recorded whole; larger ones by their statistics and
#: this many evenly spaced elements.
WHOLE = 64
SAMPLED = 64


def describe(name: str, value) -> list:
    """``[name, kind, shape, numbers, digest]`` of a fetched value or a variable's value."""
    import numpy as np

    array = np.asarray(value)
    shape = list(array.shape)
    if array.dtype.kind in "fc":
        return [name, "f", shape, _float_numbers(np.real(array).astype(np.float64).ravel()), None]
    if array.dtype.kind in "iub":
        flat = array.astype(np.int64).ravel()
        if flat.size <= WHOLE:
            return [name, "i", shape, [int(v) for v in flat], None]
        return [name, "i", shape, None, hashlib.sha1(flat.tobytes()).hexdigest()]
    return [name, "o", shape, None, hashlib.sha1(repr(array.tolist()).encode()).hexdigest()]


def _float_numbers(flat) -> list:
    import numpy as np

    if flat.size <= WHOLE:
        return [float(v) for v in flat]
    picked = np.linspace(0, flat.size - 1, SAMPLED).astype(np.int64)
    statistics = [np.abs(flat).sum(), np.square(flat).sum(), flat.min(), flat.max()]
    return [float(v) for v in statistics] + [float(v) for v in flat[picked]]
