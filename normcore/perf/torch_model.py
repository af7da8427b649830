"""The Transformer training step in PyTorch that normcore's step is timed against: the
architecture of normcore's pre-norm ``TinyTransformer`` (causal attention, exact GELU).
"""

import contextlib

from .cases import transformer_data


class TorchTransformerStep:
    """The same model in PyTorch (pre-norm blocks, causal attention, exact GELU), same step."""

    def __init__(self, torch, cfg, threads):
        self.torch, self.threads = torch, threads
        self.model = torch_transformer(torch, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        tokens, targets = transformer_data(cfg)
        self.tokens, self.targets = torch.from_numpy(tokens), torch.from_numpy(targets)

    def context(self):
        self.torch.set_num_threads(self.threads)
        return contextlib.nullcontext()

    def step(self):
        self.opt.zero_grad()
        logits = self.model(self.tokens)
        loss = self.torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                      self.targets.reshape(-1))
        loss.backward()
        self.opt.step()


def torch_transformer(torch, cfg):
    """A PyTorch model with the architecture of normcore's pre-norm TinyTransformer."""
    F, d, h = torch.nn.functional, cfg["d_model"], cfg["n_heads"]

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d, bias=name != "k") for name in "qkvo")
            self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            z = self.norm1(x)
            heads = lambda t: t.view(B, T, h, C // h).transpose(1, 2)  # noqa: E731
            a = F.scaled_dot_product_attention(heads(self.q(z)), heads(self.k(z)), heads(self.v(z)),
                                               is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(B, T, C))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = torch.nn.Embedding(cfg["vocab_size"], d)
            self.pos_emb = torch.nn.Embedding(cfg["length"], d)
            self.blocks = torch.nn.Sequential(*(Block() for _ in range(cfg["n_layers"])))
            self.norm_f, self.head = torch.nn.LayerNorm(d), torch.nn.Linear(d, cfg["vocab_size"])

        def forward(self, tokens):
            x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
            return self.head(self.norm_f(self.blocks(x)))

    return Model().to(torch.float32)
