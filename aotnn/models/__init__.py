"""The model zoo, written with the Cell API and MindSpore's parameter names."""
from .lenet import LeNet5, lenet5
from .resnet import ResNet, resnet18

__all__ = ["LeNet5", "lenet5", "ResNet", "resnet18"]
