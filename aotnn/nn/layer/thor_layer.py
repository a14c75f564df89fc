"""Layers that save the statistics THOR (the second-order optimizer ``nn.thor``) needs.

Each layer computes what its plain counterpart computes and, in training mode (``set_train()``)
while its ``thor`` flag is True, keeps two covariance matrices as non-trainable Parameters:

- ``matrix_a``: the covariance of the layer's input, written during the forward pass;
- ``matrix_g``: the covariance of the gradient of the layer's output, written during the
  backward pass of a compiled training step (the output passes through a gradient probe whose
  gradient is handed to :meth:`save_gradient`, MindSpore's ``InsertGradientOf``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

import relay_frontend

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from .basic import Dense
from .conv import Conv2d
from .embedding import Embedding, EmbeddingLookup

__all__ = ['DenseThor', 'Conv2dThor', 'EmbeddingThor', 'EmbeddingLookupThor']


def _statistic(value: np.ndarray, name: str) -> Parameter:
    return Parameter(Tensor(value.astype(np.float32)), name=name, requires_grad=False)


def _insert_gradient_of(out: Tensor, save: Callable[[Tensor], Tensor]) -> Tensor:
    """``out`` unchanged; when a training step differentiates the graph, ``save`` receives the gradient
    of ``out``."""
    capture = relay_frontend.current()
    if capture is None or not out.is_symbolic:
        return out
    probed = capture.grad_probe(out._expr, lambda grad: save(Tensor._from_expr(grad)))
    return out if probed is out._expr else Tensor._from_expr(probed)


def _covariance(rows: Tensor) -> Tensor:
    """``rows^T rows / rows.shape[0]`` in float32."""
    rows = ops.cast(rows, mstype.float32)
    return ops.matmul(ops.transpose(rows, (1, 0)), rows) * (1.0 / rows.shape[0])


class DenseThor(Dense):
    r"""The dense connected layer, saving the information needed for THOR.

    ``outputs = activation(inputs * kernel + bias)`` as :class:`Dense`. In training mode it also saves
    ``matrix_a = x^T x / N`` (N the batch size) and, in the backward pass,
    ``matrix_g = dout^T dout / N`` where ``dout`` is the gradient of ``x * kernel`` (before the bias
    and the activation), as MindSpore's DenseThor on Ascend (on GPU MindSpore divides matrix_a by
    in_channels instead).

    Args:
        in_channels (int): The number of the input channels.
        out_channels (int): The number of the output channels.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): The weight initializer. Default: 'normal'.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): The bias initializer. Default: 'zeros'.
        has_bias (bool): Specifies whether the layer uses a bias vector. Default: True.
        activation (str): activate function applied to the output, eg. 'relu'. Default: None.

    Inputs:
        - **x** (Tensor) - Tensor of shape :math:`(N, in\_channels)`.

    Outputs:
        Tensor of shape :math:`(N, out\_channels)`.

    Raises:
        TypeError: If `in_channels` or `out_channels` is not an int, or `has_bias` is not a bool.
        ValueError: If `in_channels` or `out_channels` is not positive, or the shape of `weight_init` or
            `bias_init` is incorrect.
    """

    def __init__(self, in_channels, out_channels, weight_init='normal', bias_init='zeros', has_bias=True,
                 activation=None):
        super().__init__(in_channels, out_channels, weight_init, bias_init, has_bias, activation)
        self.thor = True
        self.matrix_a = _statistic(np.eye(in_channels), "matrix_a")
        self.matrix_g = _statistic(np.eye(out_channels), "matrix_g")

    def save_gradient(self, dout: Tensor) -> Tensor:
        """Save ``dout^T dout / N`` (``dout`` the (N, out_channels) output gradient) as ``matrix_g``."""
        ops.assign(self.matrix_g, _covariance(dout))
        return dout

    def construct(self, x):
        if not (self.thor and self.training):
            return super().construct(x)
        if x.ndim < 1 or x.shape[-1] != self.in_channels:
            raise ValueError(f"DenseThor: input's last dimension must be in_channels={self.in_channels}, "
                             f"got shape {x.shape}")
        lead = x.shape[:-1]
        rows = ops.reshape(x, (-1, self.in_channels))
        ops.assign(self.matrix_a, _covariance(rows))
        out = _insert_gradient_of(ops.dense(rows, self.weight), self.save_gradient)
        if self.has_bias:
            out = out + self.bias
        if self.activation_flag:
            out = self.activation(out)
        if len(lead) != 1:
            out = ops.reshape(out, lead + (self.out_channels,))
        return out


class Conv2dThor(Conv2d):
    r"""2D convolution layer, saving the information needed for THOR.

    The output is :class:`Conv2d`'s (a float16 input runs with the weight cast to float16, as on Ascend).
    In training mode it also saves ``matrix_a_cov``, the covariance of
    the im2col patches of the input (each patch a row of :math:`C_{in}/group \cdot k_h \cdot k_w` values,
    ordered as the weight's last three axes; one row per output position, batch item and group,
    divided by their number), and in the backward pass ``matrix_g_cov``, the covariance of the output
    gradient over batch and positions (``dout`` as rows of :math:`C_{out}` values divided by
    :math:`N H_{out} W_{out}`), as MindSpore's Conv2dThor does on Ascend.

    Args:
        in_channels (int): The number of the input channel :math:`C_{in}`.
        out_channels (int): The number of the output channel :math:`C_{out}`.
        kernel_size (Union[int, tuple[int]]): The height and width of the kernel.
        stride (Union[int, tuple[int]]): The stride. Default: 1.
        pad_mode (str): "same", "valid" or "pad". Default: "same".
        padding (Union[int, tuple[int]]): The padding with "pad". Default: 0.
        dilation (Union[int, tuple[int]]): The dilation. Default: 1.
        group (int): Splits the input into groups. Default: 1.
        has_bias (bool): Whether the layer uses a bias. Default: False.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): The weight initializer. Default: 'normal'.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): The bias initializer. Default: 'zeros'.

    Inputs:
        - **x** (Tensor) - Tensor of shape :math:`(N, C_{in}, H_{in}, W_{in})`.

    Outputs:
        Tensor of shape :math:`(N, C_{out}, H_{out}, W_{out})`.

    Raises:
        TypeError: If `in_channels`, `out_channels` or `group` is not an int, or `has_bias` not a bool.
        ValueError: If a size is less than 1, `pad_mode` is unknown, or the channels are not divisible
            by `group`.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
                 group=1, has_bias=False, weight_init='normal', bias_init='zeros'):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init)
        self.thor = True
        kh, kw = self.kernel_size
        self.matrix_a_dim = in_channels // group * kh * kw
        self.matrix_g_dim = out_channels
        self.matrix_a_cov = _statistic(np.eye(self.matrix_a_dim), "matrix_a")
        self.matrix_g_cov = _statistic(np.eye(self.matrix_g_dim), "matrix_g")
        # im2col as a grouped convolution (one group per input channel) with one-hot kernels: output
        # channel c*kh*kw + i*kw + j copies input channel c at kernel offset (i, j), with the layer's
        # own stride, padding and dilation
        offsets = np.eye(kh * kw, dtype=np.float32).reshape(kh * kw, 1, kh, kw)
        self._im2col_kernel = Tensor(np.tile(offsets, (in_channels, 1, 1, 1)))

    def save_gradient(self, dout: Tensor) -> Tensor:
        """Save the covariance of ``dout`` (N, C_out, H, W) over batch and positions as ``matrix_g_cov``."""
        rows = ops.reshape(ops.transpose(dout, (0, 2, 3, 1)), (-1, self.out_channels))
        ops.assign(self.matrix_g_cov, _covariance(rows))
        return dout

    def _input_covariance(self, x: Tensor) -> Tensor:
        patches = ops.conv2d(x, ops.cast(self._im2col_kernel, x.dtype), None, self.stride, self.pad_mode,
                             self.padding, self.dilation, self.in_channels)
        rows = ops.reshape(ops.transpose(patches, (0, 2, 3, 1)), (-1, self.matrix_a_dim))
        return _covariance(rows)

    def construct(self, x):
        self._check_input(x, 4, 1)
        # as MindSpore's Conv2dThor on Ascend, a float16 input runs with the weight cast to float16
        weight = self.weight if x.dtype == self.weight.dtype else ops.cast(self.weight, x.dtype)
        saving = self.thor and self.training
        if saving:
            ops.assign(self.matrix_a_cov, self._input_covariance(x))
        out = ops.conv2d(x, weight, None, self.stride, self.pad_mode, self.padding, self.dilation, self.group)
        if saving:
            out = _insert_gradient_of(out, self.save_gradient)
        if self.has_bias:
            out = out + ops.reshape(ops.cast(self.bias, out.dtype), (1, -1, 1, 1))
        return out


def _token_counts(ids: Tensor, vocab_size: int) -> Tensor:
    """How often each id occurs in ``ids`` (a (vocab_size,) float32 vector)."""
    flat = ops.reshape(ids, (-1,))
    return ops.reduce_sum(ops.one_hot(flat, vocab_size, 1.0, 0.0), 0)


class _EmbeddingStatistics:
    """What both THOR embeddings save: id counts (``matrix_a``) and the covariance of the looked-up rows'
    gradient (``matrix_g``)."""

    def _init_statistics(self, vocab_size: int, embedding_size: int) -> None:
        self.thor = True
        self.matrix_a = _statistic(np.zeros([vocab_size]), "matrix_a")
        self.matrix_g = _statistic(np.zeros([embedding_size, embedding_size]), "matrix_g")

    def save_gradient(self, dout: Tensor) -> Tensor:
        """Save ``dout^T dout / T`` (``dout`` the gradient of the looked-up rows) as ``matrix_g``."""
        ops.assign(self.matrix_g, _covariance(ops.reshape(dout, (-1, self.embedding_size))))
        return dout

    def _record(self, ids: Tensor, out: Tensor) -> Tensor:
        ops.assign(self.matrix_a, _token_counts(ids, self.vocab_size))
        return _insert_gradient_of(out, self.save_gradient)


class EmbeddingThor(_EmbeddingStatistics, Embedding):
    r"""A lookup table of embeddings, saving the information needed for THOR.

    The output is :class:`Embedding`'s. In training mode (and with ``use_one_hot=False``, as MindSpore)
    it also saves ``matrix_a``, the number of occurrences of each id in the input (a (vocab_size,)
    vector: the diagonal of the input covariance, before dividing by the batch size), and in the backward
    pass ``matrix_g = dout^T dout / T`` with ``dout`` the (T, embedding_size) gradient of the looked-up rows.

    Args:
        vocab_size (int): The size of the dictionary of embeddings.
        embedding_size (int): The size of each embedding vector.
        use_one_hot (bool): Specifies whether to apply one_hot encoding form. Default: False.
        embedding_table (Union[Tensor, str, Initializer, numbers.Number]): The table initializer. Default: 'normal'.
        dtype (:class:`mindspore.dtype`): Data type of the one-hot values. Default: mindspore.float32.
        padding_idx (int, None): The row of this id starts at zero. Default: None.

    Inputs:
        - **x** (Tensor) - int ids of shape :math:`(\text{batch_size}, \text{x_length})`.

    Outputs:
        Tensor of shape :math:`(\text{batch_size}, \text{x_length}, \text{embedding_size})`.

    Raises:
        TypeError: If `vocab_size` or `embedding_size` is not an int, `use_one_hot` not a bool, or `dtype`
            not a number type.
        ValueError: If `padding_idx` is not in range [0, `vocab_size`).
    """

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
                 dtype=mstype.float32, padding_idx=None):
        super().__init__(vocab_size, embedding_size, use_one_hot, embedding_table, dtype, padding_idx)
        self._init_statistics(vocab_size, embedding_size)

    def construct(self, ids):
        out = super().construct(ids)
        if self.thor and self.training and not self.use_one_hot:
            out = self._record(ids, out)
        return out


class EmbeddingLookupThor(_EmbeddingStatistics, EmbeddingLookup):
    r"""Embedding lookup, saving the information needed for THOR.

    The output is :class:`EmbeddingLookup`'s; the saved ``matrix_a`` (id counts) and ``matrix_g``
    (output-gradient covariance) are those of :class:`EmbeddingThor`.

    Args:
        vocab_size (int): The size of the dictionary of embeddings.
        embedding_size (int): The size of each embedding vector.
        param_init (Union[Tensor, str, Initializer, numbers.Number]): The table initializer. Default: 'normal'.
        target (str): 'CPU' or 'DEVICE'. Default: 'CPU'.
        slice_mode (str): The slicing way in semi_auto_parallel/auto_parallel. Default: 'batch_slice'.
        manual_shapes (tuple): The accompaniment array in field slice mode. Default: None.
        max_norm (Union[float, None]): A maximum clipping value. Default: None.
        sparse (bool): Using sparse mode; must be True with target 'CPU'. Default: True.
        vocab_cache_size (int): Cache size of the dictionary; only 0 is supported. Default: 0.

    Inputs:
        - **input_indices** (Tensor) - int ids of shape :math:`(y_1, y_2, ..., y_S)`.

    Outputs:
        Tensor of shape :math:`(y_1, ..., y_S, \text{embedding_size})`.

    Raises:
        ValueError: If `target` is neither 'CPU' nor 'DEVICE', `slice_mode` is unknown, `sparse` is False
            with target 'CPU', `vocab_size` or `embedding_size` is less than 1, or `vocab_cache_size`
            is not 0.
        TypeError: If `vocab_size`, `embedding_size` or `vocab_cache_size` is not an int, `sparse` is not a
            bool or `manual_shapes` is not a tuple.
    """

    def __init__(self, vocab_size, embedding_size, param_init='normal', target='CPU', slice_mode='batch_slice',
                 manual_shapes=None, max_norm=None, sparse=True, vocab_cache_size=0):
        super().__init__(vocab_size, embedding_size, param_init, target, slice_mode, manual_shapes, max_norm,
                         sparse, vocab_cache_size)
        self._init_statistics(vocab_size, embedding_size)

    def construct(self, indices):
        out = super().construct(indices)
        if self.thor and self.training:
            out = self._record(indices, out)
        return out
