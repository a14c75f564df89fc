"""A representative slice of ONNX's own node tests (one to three per op family of
tools/onnx_conformance.py, the fixed classes included: Clip's and Einsum's TIR functions, Shape outputs,
Dropout's bool mask, integer inputs that must be constants, aotnn's converters: LSTM/GRU/RNN,
LayerNormalization's statistics, TopK, CumSum) through aotnn against the expected
outputs the onnx package ships."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from relay_frontend.onnx_import import OnnxImportError, import_onnx

from .script_loader import loaded_script

CASES = [
    "test_clip_default_inbounds", "test_hardswish", "test_gelu_tanh_1", "test_sigmoid", "test_prelu_broadcast",
    "test_softmax_axis_1", "test_logsoftmax_negative_axis", "test_less_equal_bcast", "test_equal_bcast",
    "test_basic_conv_with_padding", "test_conv_with_strides_and_asymmetric_padding", "test_convtranspose_pads",
    "test_dropout_default_mask", "test_add_bcast", "test_div_bcast", "test_pow_bcast_array", "test_where_example",
    "test_and_bcast4v3d", "test_einsum_batch_matmul", "test_einsum_transpose", "test_gemm_all_attributes",
    "test_matmul_bcast", "test_batchnorm_example", "test_instancenorm_epsilon", "test_group_normalization_example",
    "test_maxpool_2d_same_upper", "test_averagepool_2d_pads_count_include_pad", "test_globalaveragepool",
    "test_reduce_mean_keepdims_random", "test_argmax_default_axis_random", "test_shape", "test_shape_start_1_end_2",
    "test_concat_3d_axis_negative_2", "test_split_equal_parts_2d_opset13", "test_transpose_all_permutations_3",
    "test_flatten_axis2", "test_gather_0", "test_depthtospace_example", "test_slice", "test_unsqueeze_two_axes",
    "test_tile", "test_expand_dim_unchanged", "test_lstm_with_peepholes", "test_gru_seq_length",
    "test_simple_rnn_batchwise", "test_layer_normalization_3d_axis1_epsilon", "test_top_k_smallest",
    "test_cumsum_1d_reverse_exclusive", "test_celu", "test_l2normalization_axis_0", "test_isinf_negative",
    "test_pow_types_int32_float32", "test_resize_upsample_scales_linear", "test_clip_default_int8_min",
    "test_onehot_with_axis", "test_range_float_type_positive_delta", "test_constantofshape_int_zeros", "test_constant_pad",
]


@pytest.fixture(scope="module")
def conformance():
    yield from loaded_script("onnx_conformance")


@pytest.fixture(scope="module")
def node_cases(conformance):
    return {name: case for name, _, case in conformance.select_cases()}


@pytest.mark.parametrize("name", CASES)
def test_node_case_matches_expected_outputs(conformance, node_cases, name):
    case = node_cases[name]
    outputs, _ = conformance.run_aotnn(case)
    _, expected = case.data_sets[0]
    assert conformance.compare(outputs, list(expected), case.rtol, case.atol) == ""


def test_selection_covers_every_family(conformance, node_cases):
    families = {family for _, family, _ in conformance.select_cases()}
    assert families >= {"conv", "matmul", "norm", "activation", "pool", "elementwise", "compare", "shape",
                        "reduce", "resize", "pad", "scan", "recurrent"}


def test_compare_reports_dtype_shape_and_value_differences(conformance):
    want = [np.array([1.0, 2.0], np.float32)]
    assert conformance.compare([np.array([1.0, 2.0005], np.float32)], want, 1e-3, 1e-7) == ""
    assert "values differ" in conformance.compare([np.array([1.0, 2.01], np.float32)], want, 1e-3, 1e-7)
    assert "dtype float64" in conformance.compare([np.array([1.0, 2.0])], want, 1e-3, 1e-7)
    assert "shape (1, 2)" in conformance.compare([np.array([[1.0, 2.0]], np.float32)], want, 1e-3, 1e-7)


def test_shape_from_a_data_input_names_node_and_input():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    shape = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                               helper.make_node("Reshape", ["r", "s"], ["y"], name="reshape1")], "g", [x, shape], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(OnnxImportError, match=r"node 'reshape1' \(Reshape\).*its input 's' must be a constant"):
        import_onnx(model)
