"""``aotnn.communication``: the process group of data-parallel training (MindSpore's
``mindspore.communication``), backed by MPI through mpi4py."""
from .management import *  # noqa: F401,F403
from .management import __all__
