"""Converting networks and Models for THOR (MindSpore's ``mindspore.train.train_thor``)."""
from __future__ import annotations

from typing import Any

from ..nn.cell import Cell
from ..nn.layer.basic import Dense
from ..nn.layer.conv import Conv2d
from ..nn.layer.embedding import Embedding, EmbeddingLookup
from ..nn.layer.thor_layer import Conv2dThor, DenseThor, EmbeddingLookupThor, EmbeddingThor

__all__ = ["ConvertNetUtils", "ConvertModelUtils"]

_THOR_LAYERS = (DenseThor, Conv2dThor, EmbeddingThor, EmbeddingLookupThor)


def _adopt_weight_and_bias(new: Cell, old: Cell) -> Cell:
    """``new`` holding ``old``'s weight and bias Parameter objects (same names, values, optimizer links)."""
    new.weight = old.weight
    if old.has_bias:
        new.bias = old.bias
    return new


class ConvertNetUtils:
    """Replaces a network's layers by the THOR layers that save the statistics THOR needs.

    Dense becomes DenseThor, Conv2d (NCHW) Conv2dThor, Embedding EmbeddingThor and EmbeddingLookup
    EmbeddingLookupThor. The new layers take over the old layers' Parameter objects (same names and
    values) and training flag.
    """

    @staticmethod
    def _convert_dense(cell: Dense) -> DenseThor:
        new = DenseThor(cell.in_channels, cell.out_channels, "zeros", "zeros", cell.has_bias, cell.activation)
        return _adopt_weight_and_bias(new, cell)

    @staticmethod
    def _convert_conv2d(cell: Conv2d) -> Conv2dThor:
        new = Conv2dThor(cell.in_channels, cell.out_channels, cell.kernel_size, cell.stride, cell.pad_mode,
                         cell.padding, cell.dilation, cell.group, cell.has_bias, "zeros", "zeros")
        return _adopt_weight_and_bias(new, cell)

    @staticmethod
    def _convert_embedding(cell: Embedding) -> EmbeddingThor:
        new = EmbeddingThor(cell.vocab_size, cell.embedding_size, cell.use_one_hot, "zeros", cell.dtype)
        new.padding_idx = cell.padding_idx
        new.embedding_table = cell.embedding_table
        return new

    @staticmethod
    def _convert_embedding_lookup(cell: EmbeddingLookup) -> EmbeddingLookupThor:
        new = EmbeddingLookupThor(cell.vocab_size, cell.embedding_size, "zeros", cell.target, cell.slice_mode,
                                  cell.manual_shapes, cell.max_norm, cell.sparse, cell.vocab_cache_size)
        new.embedding_table = cell.embedding_table
        return new

    def _convert(self, cell: Cell) -> Cell | None:
        if isinstance(cell, _THOR_LAYERS):
            return None
        if type(cell) is Dense:
            return self._convert_dense(cell)
        if type(cell) is Conv2d and cell.data_format == "NCHW":
            return self._convert_conv2d(cell)
        if type(cell) is Embedding:
            return self._convert_embedding(cell)
        if type(cell) is EmbeddingLookup:
            return self._convert_embedding_lookup(cell)
        return None

    def _convert_to_thor_net(self, net: Cell) -> None:
        for name, cell in list(net.name_cells().items()):
            new = self._convert(cell)
            if new is None:
                if not isinstance(cell, _THOR_LAYERS):
                    self._convert_to_thor_net(cell)
                continue
            new.set_train(cell.training)
            setattr(net, name, new)

    def convert_to_thor_net(self, net: Cell) -> None:
        """Replace, in place and recursively, the layers of ``net`` by their THOR versions.

        Args:
            net (Cell): The network to convert.
        Raises:
            TypeError: If `net` is not a Cell.
        """
        if not isinstance(net, Cell):
            raise TypeError(f"For 'convert_to_thor_net', the 'net' must be a Cell, but got {type(net).__name__}.")
        self._convert_to_thor_net(net)


class ConvertModelUtils:
    """Converts a Model into one that trains with THOR."""

    @staticmethod
    def convert_to_thor_model(model: Any, network: Cell, loss_fn: Cell | None = None, optimizer: Any = None,
                              metrics: Any = None, amp_level: str = "O0", loss_scale_manager: Any = None,
                              keep_batchnorm_fp32: bool = False) -> Any:
        """A Model training ``network`` with the THOR ``optimizer``; ``model`` itself when the optimizer
        is not THOR.

        The refresh of THOR's inverses every ``frequency`` steps happens inside the compiled training
        step, so the returned Model is a plain :class:`Model` over the converted network.

        Args:
            model (Model): The high-level API for training.
            network (Cell): The training network (already converted by :func:`thor`).
            loss_fn (Cell): The loss function. Default: None.
            optimizer (Cell): The optimizer, usually the result of :func:`thor`. Default: None.
            metrics (Union[dict, set]): Metrics for evaluation. Default: None.
            amp_level (str): Mixed-precision level. Default: "O0".
            loss_scale_manager (Union[None, LossScaleManager]): The loss scale manager. Default: None.
            keep_batchnorm_fp32 (bool): Keep BatchNorm in float32 with mixed precision. Default: False.

        Returns:
            Model, the model for THOR training.
        """
        from ..nn.optim.thor import ThorGpu
        from .model import Model
        if not isinstance(optimizer, ThorGpu):
            return model
        ConvertNetUtils().convert_to_thor_net(network)
        kwargs = {"keep_batchnorm_fp32": keep_batchnorm_fp32}
        if loss_scale_manager is not None:
            kwargs["loss_scale_manager"] = loss_scale_manager
        return Model(network, loss_fn=loss_fn, optimizer=optimizer, metrics=metrics, amp_level=amp_level,
                     **kwargs)
