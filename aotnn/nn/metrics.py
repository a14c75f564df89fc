"""``aotnn.nn.metrics``: the metrics under ``nn``, as MindSpore 1.x exposed them.

They live in ``aotnn.train.metrics``.
"""
from ..train.metrics import *  # noqa: F401,F403
from ..train.metrics import __all__  # noqa: F401
