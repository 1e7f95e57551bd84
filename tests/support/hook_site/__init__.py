"""Put on ``PYTHONPATH`` while a ``calls_hook`` test runs: see :mod:`support.hooks`."""
