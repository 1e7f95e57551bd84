"""``util``: the bridge's process-wide values (rank id, rank size...)."""

_VALUES: dict = {}


def global_dict_init():
    _VALUES.clear()


def set_value(key, value):
    _VALUES[key] = value


def get_value(key, default=None):
    return _VALUES.get(key, default)
