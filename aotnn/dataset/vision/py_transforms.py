"""``mindspore.dataset.vision.py_transforms`` (MindSpore 1.x's path, deprecated in 2.x): the same names as
``mindspore.dataset.vision``."""
from . import *  # noqa: F401,F403
from . import __all__  # noqa: F401
