"""The model zoo, written with the Cell API and MindSpore's parameter names."""
from .bert import BertEncoder, bert_encoder
from .ds_cnn import DSCNN, ds_cnn
from .lenet import LeNet5, lenet5
from .lstm import LSTMModel, lstm_model
from .mobilenetv2 import MobileNetV2, mobilenetv2
from .resnet import ResNet, resnet18
from .resnet8 import ResNet8, resnet8

__all__ = ["LeNet5", "lenet5", "ResNet", "resnet18", "MobileNetV2", "mobilenetv2", "BertEncoder", "bert_encoder",
           "LSTMModel", "lstm_model", "DSCNN", "ds_cnn", "ResNet8", "resnet8"]
