"""Small networks whose parameter names exercise MindSpore 2.x's naming rules.

Written against ``mindspore``: tools/mindspore_param_names.py runs them on MindSpore 2.10 and records
``(key, Parameter.name)`` pairs; tests/nn/test_param_names.py runs them on aotnn through the aliases and
compares. Each scenario is a function returning a Cell.
"""
from collections import OrderedDict

import numpy as np


def _dense(nn, n_in=2, n_out=3):
    return nn.Dense(n_in, n_out, weight_init="zeros", bias_init="zeros")


def scenarios():
    import mindspore as ms
    from mindspore import nn

    class AppendAfterAssign(nn.Cell):  # mindcv's swin/pit pattern: empty CellList first, append later
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList()
            for _ in range(2):
                self.layers.append(nn.SequentialCell([_dense(nn), nn.ReLU()]))

    class ListThenAssign(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = nn.CellList([_dense(nn), _dense(nn)])

    class Nested(nn.Cell):
        def __init__(self):
            super().__init__()
            inner = nn.CellList([nn.CellList([_dense(nn)]), nn.CellList([_dense(nn), _dense(nn)])])
            self.outer = nn.CellList([inner])
            self.outer.append(_dense(nn))

    class InsertExtend(nn.Cell):
        def __init__(self):
            super().__init__()
            self.items = nn.CellList([_dense(nn), _dense(nn)])
            self.items.insert(1, _dense(nn))
            self.items.extend([_dense(nn)])
            self.later = nn.CellList()
            self.later.extend([_dense(nn), _dense(nn)])
            self.later.insert(0, _dense(nn))

    class Sequentials(nn.Cell):
        def __init__(self):
            super().__init__()
            self.by_list = nn.SequentialCell([_dense(nn), nn.ReLU(), _dense(nn, 3, 3)])
            self.by_args = nn.SequentialCell(_dense(nn), _dense(nn, 3, 3))
            self.by_dict = nn.SequentialCell(OrderedDict([("fc_a", _dense(nn)), ("fc_b", _dense(nn, 3, 3))]))
            self.by_args.append(_dense(nn, 3, 3))
            self.grown = nn.SequentialCell()
            self.grown.append(_dense(nn))

    class ChildInserted(nn.Cell):
        def __init__(self):
            super().__init__()
            self.insert_child_to_cell("direct", _dense(nn))
            self.holder = nn.SequentialCell([_dense(nn)])
            self.holder.insert_child_to_cell("extra", _dense(nn))

    class Explicit(nn.Cell):
        def __init__(self):
            super().__init__()
            self.own = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="custom_own")
            self.unnamed = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)))
            self.child = _ExplicitChild(nn, ms)

    class LateChild(nn.Cell):  # a sub-cell set on a child after the child was attached
        def __init__(self):
            super().__init__()
            self.body = nn.SequentialCell([_dense(nn)])
            self.body.tail = _dense(nn)
            self.head = _dense(nn)

    class NoPrefix(nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.fc = _dense(nn)
            self.stack = nn.CellList([_dense(nn)], auto_prefix=False)

    class Wrapped(nn.Cell):  # a CellList model inside a wrapper, as WithLossCell does
        def __init__(self):
            super().__init__()
            self.backbone = AppendAfterAssign()

    class Deleted(nn.Cell):
        def __init__(self):
            super().__init__()
            self.items = nn.CellList([_dense(nn), _dense(nn), _dense(nn)])
            del self.items[0]

    return OrderedDict((cls.__name__, cls) for cls in (
        AppendAfterAssign, ListThenAssign, Nested, InsertExtend, Sequentials, ChildInserted, Explicit,
        LateChild, NoPrefix, Wrapped, Deleted))


def _ExplicitChild(nn, ms):  # noqa: N802  (a Cell class made on the side that runs)
    class ExplicitChild(nn.Cell):
        def __init__(self):
            super().__init__()
            self.named = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="child_custom")
            self.plain = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)))
    return ExplicitChild()


def names_of(net) -> list:
    """``[key, Parameter.name]`` for every parameter, in ``parameters_and_names`` order."""
    return [[key, param.name] for key, param in net.parameters_and_names()]
