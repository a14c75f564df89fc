"""tools/trained_like.py: BatchNorm statistics re-estimated on data leave every channel with mean beta, std gamma."""
import numpy as np
import pytest

from aotnn import Tensor, nn
from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def trained_like():
    yield from loaded_script("trained_like")


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.conv2, self.bn2 = nn.Conv2d(4, 5, 3, stride=2), nn.BatchNorm2d(5)

    def construct(self, x):
        return self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))


def test_every_batchnorm_output_has_mean_beta_and_std_gamma(trained_like):
    rng = np.random.default_rng(3)
    net = _Net()
    for bn in (net.bn1, net.bn2):
        channels = bn.gamma.shape[0]
        bn.gamma.set_data(Tensor(rng.uniform(0.5, 1.5, channels).astype(np.float32)))
        bn.beta.set_data(Tensor(rng.normal(0, 0.1, channels).astype(np.float32)))
        bn.moving_mean.set_data(Tensor(rng.normal(3.0, 1.0, channels).astype(np.float32)))  # far off the data
        bn.moving_variance.set_data(Tensor(rng.uniform(20.0, 30.0, channels).astype(np.float32)))
    x = rng.standard_normal((6, 3, 12, 12)).astype(np.float32)
    assert trained_like.reestimate_batchnorms(net, x) == 2
    outputs = {}
    hooks = [bn.register_forward_hook(lambda cell, args, out, key=key: outputs.__setitem__(key, out.asnumpy()))
             for key, bn in (("bn1", net.bn1), ("bn2", net.bn2))]
    net(Tensor(x))
    for hook in hooks:
        hook.remove()
    for key, bn in (("bn1", net.bn1), ("bn2", net.bn2)):
        y = outputs[key].astype(np.float64)
        np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), bn.beta.asnumpy(), atol=1e-4)
        np.testing.assert_allclose(y.std(axis=(0, 2, 3)), bn.gamma.asnumpy(), rtol=1e-3)


def test_inputs_must_be_a_4d_float_array(trained_like):
    with pytest.raises(ValueError, match="inputs: expected a 4-D float numpy array"):
        trained_like.reestimate_batchnorms(_Net(), np.zeros((3, 12, 12), np.float32))
