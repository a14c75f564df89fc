"""Optimizers (MindSpore's ``nn.optim``): the Optimizer base class and one module per algorithm.

Each optimizer is a Cell whose ``construct(gradients)`` writes the new parameters and state with
``ops.assign``; calling it compiles that update into one graph, and a training step inlines it.
"""
from .ada_grad import Adagrad
from .adafactor import AdaFactor
from .adam import Adam, AdamOffload, AdamWeightDecay
from .adamax import AdaMax
from .asgd import ASGD
from .ftrl import FTRL
from .init_args import opt_init_args_register
from .lamb import Lamb
from .lars import LARS
from .lazyadam import LazyAdam
from .momentum import Momentum
from .optimizer import Optimizer
from .proximal_ada_grad import ProximalAdagrad
from .rmsprop import RMSProp
from .rprop import Rprop
from .sgd import SGD
from .thor import thor

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "AdamOffload", "LazyAdam", "Adagrad",
           "RMSProp", "FTRL", "Lamb", "LARS", "ProximalAdagrad", "Rprop", "ASGD", "AdaFactor", "thor", "AdaMax",
           "opt_init_args_register"]
