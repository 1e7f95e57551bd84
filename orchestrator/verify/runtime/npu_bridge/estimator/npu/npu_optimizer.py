"""``NPUOptimizer`` and ``NPUDistributedOptimizer``: on one device, the wrapped optimizer."""


class _Wrapped:
    def __init__(self, opt, *args, **kwargs):
        self._opt = opt

    def __getattr__(self, name):
        return getattr(self._opt, name)


class NPUDistributedOptimizer(_Wrapped):
    pass


class NPUOptimizer(_Wrapped):
    pass
