"""``mindspore.compression.quant``: configuration of quantization-aware training."""
from .qat import create_quant_config

__all__ = ['create_quant_config']
