"""``aotnn.train``: Model, callbacks, metrics and checkpoints (``mindspore.train``)."""
from .callback import Callback, LossMonitor, RunContext
from .loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from .model import Model
from .train_thor import ConvertModelUtils, ConvertNetUtils
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from .metrics import *  # noqa: F401,F403
