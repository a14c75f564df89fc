"""aotnn.dataset pipelines against values written out by hand (MindSpore 2.10's documented behaviour)."""
import numpy as np
import pytest

from aotnn import dataset as ds
from aotnn.dataset import transforms, vision


def _rows(dataset, **kwargs):
    return [[np.asarray(v).tolist() for v in row] for row in dataset.create_tuple_iterator(output_numpy=True, **kwargs)]


def test_numpy_slices_batch_map_repeat():
    data = {"x": np.arange(10, dtype=np.float32).reshape(5, 2), "y": np.arange(5, dtype=np.int32)}
    d = ds.NumpySlicesDataset(data, shuffle=False)
    assert d.get_col_names() == ["x", "y"] and d.get_dataset_size() == 5
    d = d.map(lambda v: v * 2, input_columns="x").batch(2)
    assert d.get_dataset_size() == 3 and d.get_batch_size() == 2
    assert _rows(d) == [[[[0, 2], [4, 6]], [0, 1]], [[[8, 10], [12, 14]], [2, 3]], [[[16, 18]], [4]]]
    assert ds.NumpySlicesDataset(data, shuffle=False).batch(2, drop_remainder=True).get_dataset_size() == 2
    assert ds.NumpySlicesDataset(data, shuffle=False).repeat(3).get_dataset_size() == 15
    first = next(ds.NumpySlicesDataset(data, shuffle=False).create_dict_iterator())
    assert sorted(first) == ["x", "y"] and first["y"].asnumpy() == 0


def test_map_to_new_columns_and_tensors_out():
    d = ds.NumpySlicesDataset({"x": np.arange(4), "y": np.arange(4) * 10}, shuffle=False)
    d = d.map(lambda a: (a, a * 2), input_columns="x", output_columns=["p", "q"])
    assert d.get_col_names() == ["p", "q", "y"]   # as MindSpore 2.10 orders them (measured)
    row = next(iter(d))
    assert [t.asnumpy().item() for t in row] == [0, 0, 0]
    with pytest.raises(ValueError, match="input column 'z'"):
        d.map(lambda a: a, input_columns="z")


def test_generator_sources_and_shuffle_is_a_seeded_permutation():
    class Source:
        def __getitem__(self, i):
            return np.array([i], np.float32), np.int32(i)

        def __len__(self):
            return 6

    ds.config.set_seed(5)
    shuffled = [r[1] for r in _rows(ds.GeneratorDataset(Source(), ["data", "label"]))]  # shuffle=None: shuffles
    assert sorted(shuffled) == list(range(6))
    ds.config.set_seed(5)
    assert [r[1] for r in _rows(ds.GeneratorDataset(Source(), ["data", "label"]))] == shuffled
    ordered = ds.GeneratorDataset(Source(), ["data", "label"], shuffle=False)
    assert [r[1] for r in _rows(ordered)] == list(range(6))
    shard = ds.GeneratorDataset(Source(), ["data", "label"], shuffle=False, num_shards=2, shard_id=1)
    assert [r[1] for r in _rows(shard)] == [1, 3, 5]
    gen = ds.GeneratorDataset(lambda: ((np.float32(i), i) for i in range(3)), ["a", "b"])
    assert _rows(gen.repeat(2)) == [[0.0, 0], [1.0, 1], [2.0, 2]] * 2
    assert gen.get_dataset_size() == 3
    buffered = [r[1] for r in _rows(ordered.shuffle(4))]
    assert sorted(buffered) == list(range(6))
    with pytest.raises(ValueError, match="random-access"):
        ds.GeneratorDataset(lambda: iter([]), ["a"], shuffle=True)


def test_transforms_and_stubs():
    image = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    chw = vision.HWC2CHW()(image)
    assert chw.shape == (3, 2, 2) and chw[1, 0, 1] == image[0, 1, 1]
    out = vision.Normalize([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])(image)
    np.testing.assert_allclose(out, (image - np.array([1.0, 2.0, 3.0])) / 2.0)
    np.testing.assert_allclose(vision.Rescale(1 / 255, -0.5)(image), image / 255 - 0.5, rtol=1e-6)
    np.testing.assert_array_equal(transforms.OneHot(3)(np.array([2, 0])), [[0, 0, 1], [1, 0, 0]])
    assert transforms.TypeCast(np.float16)(np.array([1, 2])).dtype == np.float16
    assert transforms.Compose([lambda a: a + 1, lambda a: a * 3])(np.array(1)) == 6
    assert vision.Inter.BILINEAR.value == "bilinear"
    with pytest.raises(NotImplementedError, match="mindspore.dataset.vision.Decode"):
        vision.Decode()
    with pytest.raises(NotImplementedError, match="ImageFolderDataset"):
        ds.ImageFolderDataset("somewhere")


def test_older_module_paths_resolve_through_the_aliases():
    from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases
    install_mindspore_aliases()
    try:
        import mindspore.dataset.transforms.c_transforms as c_transforms
        import mindspore.dataset.vision.c_transforms as c_vision
        from mindspore.train.callback import CheckpointConfig, ModelCheckpoint, TimeMonitor
    finally:
        uninstall_mindspore_aliases()
    assert c_vision.HWC2CHW is vision.HWC2CHW and c_transforms.OneHot is transforms.OneHot
    from aotnn.train import checkpoint_callback, time_monitor
    assert (ModelCheckpoint, CheckpointConfig) == (checkpoint_callback.ModelCheckpoint,
                                                   checkpoint_callback.CheckpointConfig)
    assert TimeMonitor is time_monitor.TimeMonitor
