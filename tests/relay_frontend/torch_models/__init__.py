"""Vision and text models written in plain torch.nn (torchvision's layouts), exported to ONNX by the
tests: MobileNetV2, EfficientNet-B0, ResNet-18 and a transformer encoder block."""
