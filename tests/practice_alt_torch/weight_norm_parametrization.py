"""WeightNormLinear as torch's own weight_norm parametrization of a Linear: g and v are
parametrizations.weight.original0 and original1, the forward is nn.Linear's."""

from torch import nn
from torch.nn.utils.parametrizations import weight_norm


class WeightNormLinear(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        weight_norm(self, dim=0)
