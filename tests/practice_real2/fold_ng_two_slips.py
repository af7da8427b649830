# BN folding, deeplearning.ai flavour (parameters dict in, dict out); the running
# variance is treated as a standard deviation and eps is left out.
import numpy as np


def fold_parameters(parameters):
    W, b = parameters["W"], parameters["b"]
    mu, sigma = parameters["running_mean"], parameters["running_var"]
    gamma, beta = parameters["gamma"], parameters["beta"]
    s = gamma / sigma
    return {"W": W * s[:, np.newaxis], "b": s * (b - mu) + beta}


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    folded = fold_parameters({"W": W, "b": b, "running_mean": running_mean,
                              "running_var": running_var, "gamma": gamma, "beta": beta})
    return folded["W"], folded["b"]
