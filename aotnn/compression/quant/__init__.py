"""``mindspore.compression.quant``: quantization-aware training, post-training quantization from a calibration
set, and their int8 deployment."""
from .export_int8 import convert_to_int8, export_int8
from .observer import MinMaxObserver, MSEObserver, PercentileObserver
from .onnx_layers import OnnxLayers
from .ptq import PostTrainingQuantization
from .qat import create_quant_config
from .quantizer import QuantizationAwareTraining

__all__ = ['create_quant_config', 'QuantizationAwareTraining', 'convert_to_int8', 'export_int8',
           'PostTrainingQuantization', 'MinMaxObserver', 'PercentileObserver', 'MSEObserver',
           'OnnxLayers']
