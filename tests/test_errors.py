"""Bad input gets an exception of the fitting type whose message says what was expected."""

import numpy as np
import pytest

import normcore as nc


@pytest.mark.parametrize("layer, x, message", [
    (nc.BatchNorm1d(3), np.ones(3), r"expected 2D or 3D input \(got 1D input\)"),
    (nc.BatchNorm1d(3), np.ones((2, 3, 4, 5)), r"expected 2D or 3D input \(got 4D input\)"),
    (nc.BatchNorm2d(3), np.ones((2, 3, 4)), r"expected 4D input \(got 3D input\)"),
    (nc.InstanceNorm2d(3), np.ones((2, 3)), r"expected 4D or unbatched 3D input \(got 2D input\)"),
])
def test_wrong_number_of_dimensions(layer, x, message):
    with pytest.raises(ValueError, match=message):
        layer(x)


@pytest.mark.parametrize("layer, x, message", [
    (nc.BatchNorm1d(5), np.ones((2, 3)), r"BatchNorm1d\(5\) expected input with 5 channels on axis 1, got input of shape \(2, 3\)"),
    (nc.BatchNorm2d(2), np.ones((2, 3, 4, 4)), r"2 channels on axis 1"),
    (nc.GroupNorm(2, 4), np.ones((2, 6, 3)), r"GroupNorm\(2, 4\) expected input of shape \(N, 4, \*\), got \(2, 6, 3\)"),
    (nc.InstanceNorm1d(4, affine=True), np.ones((2, 3, 5)), r"4 channels on axis 1"),
])
def test_wrong_channel_count(layer, x, message):
    with pytest.raises(ValueError, match=message):
        layer(x)


@pytest.mark.parametrize("layer", [nc.LayerNorm(5), nc.RMSNorm(5)])
def test_normalized_shape_mismatch(layer):
    msg = r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of size \[2, 4\]"
    with pytest.raises(ValueError, match=msg):
        layer(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"\[\*, 2, 3\]"):
        nc.LayerNorm((2, 3))(np.ones((3,)))


@pytest.mark.parametrize("layer", [nc.LayerNorm(3), nc.RMSNorm(3), nc.BatchNorm1d(3), nc.GroupNorm(1, 3),
                                   nc.InstanceNorm1d(3), nc.Dropout(0.1)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.complex128])
def test_integer_bool_and_complex_input(layer, dtype):
    with pytest.raises(TypeError, match=rf"expects a floating-point input \(float16, float32 or float64\), got dtype {np.dtype(dtype)}"):
        layer(np.ones((2, 3, 4), dtype=dtype))


def test_batchnorm_training_with_one_value_per_channel():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size \(1, 3\)"):
        nc.BatchNorm1d(3)(np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel"):
        nc.BatchNorm2d(3)(np.ones((1, 3, 1, 1)))
    with pytest.raises(ValueError, match=r"Expected more than 1 spatial element when training"):
        nc.InstanceNorm1d(3)(np.ones((2, 3, 1)))
    nc.BatchNorm1d(3).eval()(np.ones((1, 3)))  # evaluation with running statistics is fine
    nc.BatchNorm1d(3)(np.ones((1, 3, 2)))  # two values per channel (N * L = 2) is fine


def test_batchnorm_training_with_nonpositive_eps():
    with pytest.raises(ValueError, match="eps must be positive during training"):
        nc.BatchNorm1d(3, eps=0.0)(np.ones((4, 3)))


def test_groupnorm_channels_not_divisible_by_groups():
    with pytest.raises(ValueError, match=r"num_channels \(4\) must be divisible by num_groups \(3\)"):
        nc.GroupNorm(3, 4)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_p_outside_unit_interval(p):
    with pytest.raises(ValueError, match=rf"dropout probability has to be between 0 and 1, but got {p}"):
        nc.Dropout(p)


def test_dropout_rng_of_the_wrong_type():
    with pytest.raises(TypeError, match="rng must be None, an int seed or a numpy.random.Generator"):
        nc.Dropout(0.5, rng="seed")


@pytest.mark.parametrize("bad", [dict(momentum=1.5), dict(num_features=0)])
def test_batchnorm_bad_constructor_arguments(bad):
    kwargs = dict(num_features=3) | bad
    with pytest.raises(ValueError, match="must be"):
        nc.BatchNorm1d(**kwargs)


@pytest.mark.parametrize("layer, x", [
    (nc.LayerNorm(4), np.ones((2, 4))),
    (nc.RMSNorm(4), np.ones((2, 4))),
    (nc.BatchNorm1d(4), np.arange(8.0).reshape(2, 4)),
    (nc.GroupNorm(2, 4), np.arange(8.0).reshape(2, 4)),
    (nc.InstanceNorm1d(2), np.arange(12.0).reshape(2, 2, 3)),
    (nc.Dropout(0.5), np.ones((2, 4))),
])
def test_upstream_gradient_of_the_wrong_shape(layer, x):
    y = layer(x)
    bad = np.ones(y.shape[:-1] + (y.shape[-1] + 1,))
    with pytest.raises(ValueError, match=rf"upstream gradient of the output's shape \({y.shape[0]}, "):
        layer.backward(bad)
    with pytest.raises(ValueError, match="upstream gradient"):
        layer.backward(np.ones(y.size))  # flattened: the same size is not enough


def test_constructor_arguments_of_the_wrong_shape():
    with pytest.raises(ValueError, match="normalized_shape must be a positive int"):
        nc.LayerNorm(0)
    with pytest.raises(ValueError, match="normalized_shape must be a positive int"):
        nc.RMSNorm(())
