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


@pytest.mark.parametrize("layer", [nc.LayerNorm(5), nc.RMSNorm(5), nc.DyT(5)])
def test_normalized_shape_mismatch(layer):
    msg = r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of size \[2, 4\]"
    with pytest.raises(ValueError, match=msg):
        layer(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"\[\*, 2, 3\]"):
        nc.LayerNorm((2, 3))(np.ones((3,)))


@pytest.mark.parametrize("layer", [nc.LayerNorm(3), nc.RMSNorm(3), nc.BatchNorm1d(3), nc.GroupNorm(1, 3),
                                   nc.InstanceNorm1d(3), nc.DyT(4), nc.Dropout(0.1)])
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
    (nc.DyT(4), np.ones((2, 4))),
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
    with pytest.raises(ValueError, match="DyT: normalized_shape must be a positive int"):
        nc.DyT((3, 0))


# --- messages that say what was expected, beyond the layers ----------------------------------

def test_an_optimizer_without_parameters_says_it_expected_some():
    with pytest.raises(ValueError, match=r"SGD expected at least one Parameter to optimize "
                                         r"\(e.g. model.parameters\(\)\), got an empty parameter list"):
        nc.SGD([], lr=0.1)


def test_gradcheck_says_it_expected_a_gradient_where_backward_returned_none():
    class Doubles(nc.Module):
        def forward(self, x):
            return 2 * np.asarray(x)

        def backward(self, dy):
            return None

    with pytest.raises(ValueError, match=r"expected a gradient of the floating-point input x \(an array "
                                         r"of its shape \(2, 3\)\), backward returned None"):
        nc.gradcheck(Doubles(), np.ones((2, 3)))


def test_a_step_through_check_that_does_not_exist_lists_the_checks():
    from normcore.derivations import step_through
    st = step_through("layernorm")
    with pytest.raises(KeyError, match=r"no numerical check of node 'z'; expected one of the checks "
                                       r"\[\('y', 'compact'\)"):
        st.check("z", "numerical")


def test_a_tape_whose_output_does_not_depend_on_its_input_says_what_was_expected():
    from normcore.derivations import step_through
    from normcore.derivations.graph import computation_graph
    st = step_through("rmsnorm")
    for node in st.tape:
        node.edges = []
    with pytest.raises(ValueError, match=r"expected a path from x to \w+ on the tape \(the output computed "
                                         r"from the input\), found none"):
        computation_graph(st)


def test_the_practice_driver_says_what_the_contract_expected():
    from normcore.practice.driver import ContractError, Driver

    class Plain:
        gamma = np.ones(3)

    with pytest.raises(ContractError, match=r"gamma is a plain array: expected its gradient in an attribute "
                                            r"dgamma \(or gamma_grad\), the layer has neither"):
        Driver(Plain()).grad("gamma")
    with pytest.raises(ContractError, match=r"expected an attribute running_mean \(the running statistic "
                                            r"BatchNorm keeps\), the layer has none"):
        Driver(Plain()).running("mean")
    with pytest.raises(ContractError, match=r"expected gamma with 4 values, shape \(4,\), got shape \(3,\)"):
        Driver(Plain()).set_param("gamma", np.ones(4))


def test_grading_a_class_that_is_not_in_the_file_lists_the_classes_it_defines(tmp_path):
    from normcore.practice import CannotGrade
    from normcore.practice.loading import find_class, load_module
    path = tmp_path / "mine.py"
    path.write_text("class MyLayerNorm:\n    pass\n\nclass Helper:\n    pass\n")
    with pytest.raises(CannotGrade, match=r"the file defines no class named LayerNorm; expected one of the "
                                          r"classes it defines: MyLayerNorm, Helper"):
        find_class(load_module(path), "LayerNorm")


def test_fit_says_how_many_steps_and_batches_it_expected():
    task = nc.tasks.ReverseTask(n_tokens=2, n_symbols=4)
    model = nc.TinyTransformer(task.vocab_size, 8, 1, 2, task.seq_len, rng=0)
    with pytest.raises(ValueError, match=r"fit: steps must be >= 1, got 0"):
        nc.fit(model, task, nc.SGD(model.parameters(), lr=0.1), steps=0, progress=False)
    batches = [task.batch(3, seed=s) for s in range(2)]
    with pytest.raises(ValueError, match=r"fit: expected at least 3 batches, one per step; the batches ran out "
                                         r"after 2 of 3 steps"):
        nc.fit(model, batches, nc.SGD(model.parameters(), lr=0.1), steps=3, progress=False)


def test_compare_names_what_it_expected_for_an_unknown_model(capsys):
    from normcore.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(["compare", "nonsense"])
    err = " ".join(capsys.readouterr().err.split())
    assert exit_.value.code == 2
    assert "argument MODEL: unknown 'nonsense': expected a model --help lists (layernorm, attention, ...)" in err
