"""``opt_init_args_register`` records an optimizer's constructor arguments as MindSpore's does."""
from aotnn import nn
from aotnn.nn.optim.optimizer import Optimizer, opt_init_args_register


class Plain(Optimizer):
    @opt_init_args_register
    def __init__(self, params, learning_rate=0.1, beta=0.9, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)


def test_records_arguments():
    net = nn.Dense(2, 2)
    opt = Plain(net.trainable_params(), beta=0.5)
    assert opt.init_params == {"params": net.trainable_params()}
    assert opt.init_learning_rate == 0.1
    assert opt.init_args == {"beta": 0.5, "weight_decay": 0.0}
