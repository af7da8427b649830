"""Optimizers (SGD, Adam, AdamW), learning-rate schedules and gradient clipping."""

from .optimizers import SGD, Adam, AdamW, Optimizer, clip_grad_norm, grad_norm
from .schedules import Schedule, constant, linear_warmup, warmup_cosine, warmup_inverse_sqrt

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "clip_grad_norm", "grad_norm", "Schedule", "constant",
           "linear_warmup", "warmup_inverse_sqrt", "warmup_cosine"]
