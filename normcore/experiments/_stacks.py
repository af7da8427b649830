"""Small residual stacks that the claims notebook's evidence and the question bank's measures
share, so that a number the bank quotes is the number the claims notebook prints.

    xs = residual_stack("post", 8)          # x_0 ... x_8 of a variance-preserving stack
    x0_weight(xs)                           # the weight of x_0 in each x_l
    blocks = transformer_stack("pre", 8)    # 8 TransformerBlocks, d_model 32, 4 heads
    input_gradient(blocks, x, dy)           # dL/dx_0 of the stack
    output_change("post", 8, seed=0)        # its output's relative move under a weight change
"""

import numpy as np

from .. import nn, norms


def residual_stack(position, n_layers, seed=0, d=256, tokens=64):
    """x_0 ... x_L, (L + 1, tokens, d), of a stack whose branches F_l keep the variance
    (Var F(x) = Var x, the write-ups' assumption): F_l a Linear(d, d) with Xavier-normal
    weights, the norm a LayerNorm without affine parameters. Post: Norm(x + F(x)); pre:
    x + F(Norm(x))."""
    rng = np.random.default_rng(seed)
    norm = norms.LayerNorm(d, elementwise_affine=False)
    xs = [rng.standard_normal((tokens, d))]
    for _ in range(n_layers):
        f = nn.Linear(d, d, bias=False, init="xavier_normal", rng=rng)
        x = xs[-1]
        xs.append(norm(x + f(x)) if position == "post" else x + f(norm(x)))
    return np.stack(xs)


def x0_weight(xs):
    """The weight of x_0 in each x_l of ``residual_stack``'s output: <x_l, x_0> / <x_0, x_0>."""
    return np.einsum("ltd,td->l", xs, xs[0]) / np.sum(xs[0] ** 2)


def transformer_stack(position, n_layers, seed=0, d=32):
    """n_layers TransformerBlocks (4 heads) with the norm at ``position``."""
    rng = np.random.default_rng(seed)
    return [nn.TransformerBlock(d, 4, position=position, n_layers=n_layers, rng=rng)
            for _ in range(n_layers)]


def run(blocks, x):
    """The stack's output on x."""
    for block in blocks:
        x = block(x)
    return x


def input_gradient(blocks, x, dy):
    """dL/dx_0 of the stack: the forward on x, then the backward from dy."""
    run(blocks, x)
    for block in reversed(blocks):
        dy = block.backward(dy)
    return dy


def output_change(position, depth, seed=24, size=1e-3):
    """How far a stack's output moves, relative to its size, when every weight matrix W of
    every block moves by size * std(W) * N(0, 1) (the measure of Liu et al. 2020), on a
    (4, 8, 32) input."""
    rng = np.random.default_rng(seed)
    blocks = transformer_stack(position, depth, seed=seed)
    x = rng.standard_normal((4, 8, 32))
    y = run(blocks, x)
    for block in blocks:
        for _, p in block.named_parameters():
            if p.data.ndim == 2:
                p.data += size * rng.standard_normal(p.data.shape) * p.data.std()
    return np.linalg.norm(run(blocks, x) - y) / np.linalg.norm(y)
