"""``aotnn.train``: Model, callbacks, metrics and checkpoints (``mindspore.train``)."""
from .callback import Callback, LossMonitor, RunContext
from .checkpoint_callback import CheckpointConfig, ModelCheckpoint
from .loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from .model import Model
from .summary import SummaryRecord
from .time_monitor import TimeMonitor
from .train_thor import ConvertModelUtils, ConvertNetUtils
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from .metrics import *  # noqa: F401,F403
