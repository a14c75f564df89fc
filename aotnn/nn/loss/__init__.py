"""Losses, MindSpore's ``nn.loss``: one family per module, each module's ``__all__`` re-exported here."""
from .binary import *  # noqa: F401,F403
from .binary import __all__ as _binary
from .classification import *  # noqa: F401,F403
from .classification import __all__ as _classification
from .cosine_embedding import *  # noqa: F401,F403
from .cosine_embedding import __all__ as _cosine
from .cross_entropy import *  # noqa: F401,F403
from .cross_entropy import __all__ as _cross_entropy
from .distribution import *  # noqa: F401,F403
from .distribution import __all__ as _distribution
from .dice import *  # noqa: F401,F403
from .dice import __all__ as _dice
from .focal import *  # noqa: F401,F403
from .focal import __all__ as _focal
from .loss_base import *  # noqa: F401,F403
from .loss_base import __all__ as _base
from .ranking import *  # noqa: F401,F403
from .ranking import __all__ as _ranking
from .regression import *  # noqa: F401,F403
from .regression import __all__ as _regression
from .sampled_softmax import *  # noqa: F401,F403
from .sampled_softmax import __all__ as _sampled

__all__ = _base + _regression + _binary + _cross_entropy + _focal + _dice + _cosine + _sampled + _classification + _ranking + _distribution
