"""``mindspore.compression.quant``: quantization-aware training and its int8 deployment."""
from .export_int8 import convert_to_int8, export_int8
from .qat import create_quant_config
from .quantizer import QuantizationAwareTraining

__all__ = ['create_quant_config', 'QuantizationAwareTraining', 'convert_to_int8', 'export_int8']
