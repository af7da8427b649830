"""The probes only the PyTorch track runs, on top of the exercise's own.

Some are checked against normcore's layer like every other probe: inputs where a missing
keepdim gives numbers instead of a shape error (a square input; C == L for BatchNorm). The
others look at what only a torch.nn.Module has, and their reference is torch's own layer
(torch.nn.LayerNorm, ...; for DyT, which torch lacks, the track's reference answer): the
parameters, buffers and state_dict keys, buffers without autograd history after a training
forward, the input left unchanged by the forward, and RMSNorm in float16.
"""

import numpy as np

from ..exercises import BN, F64, Probe, norm_probe
from ..runs import example

F16 = 1e-2  # relative tolerance of a float16 observation (float16 keeps about 3 digits)


def module_probe(exercise):
    """Parameters, buffers and state_dict keys of the module as built, then whether its buffers
    are free of autograd history after two training forwards (and BatchNorm's buffers)."""
    def run(rec, make, rng):
        layer = example(exercise, make)
        for kind in ("parameters", "buffers", "state_dict keys"):
            rec(kind, layer.names(kind), 0, "equal")
        for _ in range(2):
            layer.forward(rng.standard_normal(exercise.example_shape), *exercise.example_extra)
        rec("buffers detached", layer.buffers_without_history(), 0, "equal")
        if exercise.name == "batchnorm":  # the values too, against torch.nn.BatchNorm1d's
            rec("running_mean", layer.running("mean"), F64)  # read first: a training-only
            rec("running_var", layer.running("var"), F64)  # answer stops here (sandbox)
            rec("batches tracked", float(layer.layer.num_batches_tracked), 0, "abs")
    return Probe("the module; then 2 training forwards", run)


def in_place_probe(exercise):
    """The forward on tanh(x), the output of a previous layer that autograd keeps: is it left
    unchanged, and does the backward through both layers still work?"""
    def run(rec, make, rng):
        layer = example(exercise, make)
        x = rng.standard_normal(exercise.example_shape)
        unchanged, backward = layer.forward_on_activation(x, *exercise.example_extra)
        rec("input unchanged", unchanged, 0, "equal")
        rec("autograd intact", backward, 0, "equal")
    return Probe("forward on tanh(x): the input, autograd", run)


def float16_probe(label, xshape, scale, eps=1e-5):
    """RMSNorm(D, eps) in float16 (the module moved to float16, as in a half-precision model)
    on inputs of standard deviation ``scale``: above about 256, x**2 overflows float16; with
    eps=None, eps is float32's machine epsilon (the dtype the norm is computed in)."""
    def run(rec, make, rng):
        layer = make(xshape[-1], eps=eps)
        layer.set_param("gamma", rng.standard_normal(xshape[-1]))
        x = (rng.standard_normal(xshape) * scale).astype(np.float16)
        rec("forward", layer.forward(x), F16)
        rec("output dtype", str(layer.forward(x).dtype), 0, "equal")
        dy = rng.standard_normal(xshape).astype(np.float16)
        layer.zero_grad(("gamma",))
        rec("dx", layer.backward(dy), F16)
        rec("dgamma", layer.grad("gamma"), F16)
    return Probe(label, run)


SQUARE = {  # inputs whose sizes agree, so that a missing keepdim broadcasts instead of failing
    "layernorm": (norm_probe("square (6, 6)", (6,), (6,), (6, 6), ("gamma", "beta"), kwargs={"eps": 1e-5}),),
    "rmsnorm": (norm_probe("square (6, 6)", (6,), (6,), (6, 6), ("gamma",), kwargs={"eps": 1e-5}),),
    "batchnorm": (norm_probe("train (4, 3, 3), C = L", (3,), (3,), (4, 3, 3), BN, scale=2.0, shift=1.0),),
    "softmax": (norm_probe("square (5, 5), axis=-1", (-1,), None, (5, 5), ()),),
    "log_softmax": (norm_probe("square (5, 5), axis=-1", (-1,), None, (5, 5), ()),),
}

FLOAT16 = {"rmsnorm": (float16_probe("float16, |x| ~ 300 (4, 6)", (4, 6), 300.0),
                       float16_probe("float16, |x| ~ 1 (4, 6)", (4, 6), 1.0),
                       float16_probe("float16, eps=None, |x| ~ 0.01 (4, 6)", (4, 6), 0.01, eps=None))}


def torch_probes(exercise):
    """The probes checked against torch's own layer (or the track's answer): label -> probe;
    none for a function (fold_batchnorm), which has no module."""
    if exercise.function:
        return {}
    probes = (module_probe(exercise), in_place_probe(exercise)) + FLOAT16.get(exercise.name, ())
    return {p.label: p for p in probes}


def numpy_probes(exercise):
    """The track's extra probes checked against normcore's layer."""
    return SQUARE.get(exercise.name, ())

