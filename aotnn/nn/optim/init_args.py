"""``opt_init_args_register``: MindSpore's decorator that records an optimizer's constructor arguments."""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["opt_init_args_register"]


def opt_init_args_register(fn: Callable) -> Callable:
    """Decorate an optimizer's ``__init__`` so that the instance records its arguments, as MindSpore does:
    ``init_params`` ({'params': ...}), ``init_learning_rate`` (a Tensor as a list, a schedule Cell as None)
    and ``init_args`` (every other argument, defaults applied).

    Raises:
        TypeError: the call's arguments do not fit ``fn``'s signature.
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def register(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("self", None)
        # set before Cell.__init__ has run (as MindSpore does), so past Cell's attribute routing
        record = functools.partial(object.__setattr__, self)
        if "params" in arguments:
            record("init_params", {"params": arguments.pop("params")})
        if "optimizer" in arguments:
            record("init_params", {"params": arguments.pop("optimizer").init_params["params"]})
        if "learning_rate" in arguments:
            rate = arguments.pop("learning_rate")
            if isinstance(rate, Tensor):
                rate = rate.asnumpy().tolist()
            record("init_learning_rate", None if isinstance(rate, Cell) else rate)
        record("init_args", arguments)
        fn(self, *args, **kwargs)

    return register
