"""Regressions: each test failed on an earlier version of the norm layers and passes now."""

import numpy as np
import pytest

from norm_tiers import TIER_IDS, TIERS

tiers = pytest.mark.parametrize("tier", TIERS, ids=TIER_IDS)


# --- found by the differential suite ---------------------------------------------------------

@tiers
@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (1, 3)), ("BatchNorm1d", (1, 3, 1)),
                                         ("BatchNorm2d", (1, 3, 1, 1))])
def test_batchnorm_without_running_stats_checks_the_batch_in_evaluation_too(tier, name, shape):
    """track_running_stats=False uses the batch's statistics in evaluation, so, as in training
    and in PyTorch, one value per channel and eps <= 0 raise there too (they gave beta and a
    division by zero)."""
    bn = getattr(tier, name)(3, track_running_stats=False).eval()
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, "
                                         rf"got input size \({shape[0]}, 3"):
        bn(np.ones(shape))
    bn = getattr(tier, name)(3, eps=0.0, track_running_stats=False).eval()
    with pytest.raises(ValueError, match="batch_norm eps must be positive during training"):
        bn(np.arange(12.0).reshape((4, 3) + shape[2:]))
    bn = getattr(tier, name)(3, eps=0.0).eval()  # the running statistics: eps = 0 is allowed
    assert bn(np.ones(shape)).shape == shape
