"""Optimizers (SGD, Adam, AdamW) with torch-style parameter groups, learning-rate schedules and gradient clipping."""

from .optimizers import SGD, Adam, AdamW, Optimizer, clip_grad_norm, grad_norm, param_groups_no_decay
from .schedules import Schedule, constant, linear_warmup, warmup_cosine, warmup_inverse_sqrt

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "clip_grad_norm", "grad_norm", "param_groups_no_decay", "Schedule",
           "constant", "linear_warmup", "warmup_inverse_sqrt", "warmup_cosine"]
