"""``mindspore.dataset.transforms.py_transforms`` (MindSpore 1.x's path, deprecated in 2.x): the same names as
``mindspore.dataset.transforms``."""
from . import *  # noqa: F401,F403
from . import __all__  # noqa: F401
