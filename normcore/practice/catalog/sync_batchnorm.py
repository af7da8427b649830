"""SyncBatchNorm mistakes: statistics and gradients across workers."""

from ...i18n import N_
from .base import Anchor, Mistake, solution


# The pieces of the reference answers that the mutants replace (see base.Anchor).
SYNC_COUNT = Anchor("count", "x.sum(axis=0)")
SYNC_MEAN = Anchor("mean", "mean = got[1:] / N")
SYNC_SQDEV = Anchor("sq-dev", "((x - mean) ** 2).sum(axis=0)")
SYNC_VAR = Anchor("var", "var = got2 / N")
SYNC_UNBIASED = Anchor("unbiased", "var * N / (N - 1)")
SYNC_REDUCE = Anchor("reduce", "got = self.group.all_reduce(local)")
SYNC_DX = Anchor("dx", "(dy - sum_dy / N - x_hat * sum_dy_xhat / N)")
SYNC_REDUCE_SUMS = Anchor("reduce-sums", "got = self.group.all_reduce(sent)")
SYNC_REDUCE_SQDEV = Anchor("sq-dev", "self.group.all_reduce(((x - mean) ** 2).sum(axis=0))")
SYNC_DBETA = Anchor("dbeta", "local[:C]")
SYNC_DGAMMA = Anchor("dgamma", "local[C:]")
SYNC_LOCAL_MEAN = "x.sum(axis=0) / max(n_k, 1)"  # this worker's own mean (0 on an empty shard)

MISTAKES = [
    Mistake(
        "sync-bn-variances-averaged",
        N_("SyncBatchNorm averages the workers' own variances"),
        N_("right when every worker's shard has the same mean, too small otherwise: each worker "
           "took squared deviations from its OWN mean (its own variance) and the workers averaged "
           "them, so the spread between the workers' means is lost; the outputs come out too "
           "large and running_var too small"),
        N_("The variance of the whole batch is the mean of squared deviations from the GLOBAL "
           "mean: all-reduce the mean first, then sum (x_k - mean)**2; or merge each worker's "
           "(n_k, mean_k, M2_k) with Chan's formula, M2 = sum_k [M2_k + n_k (mean_k - mean)**2]."),
        {"sync_batchnorm": [
            ((SYNC_SQDEV, f"((x - {SYNC_LOCAL_MEAN}) ** 2).sum(axis=0)"),),
            ((SYNC_SQDEV, f"((x - {SYNC_LOCAL_MEAN}) ** 2).sum(axis=0) / max(n_k, 1)"),
             (SYNC_VAR, "var = got2 / self.group.world_size")),
        ]},
        taught=solution("sync_batchnorm"),
    ),
    Mistake(
        "sync-bn-unbiased-local-count",
        N_("SyncBatchNorm's running_var unbiased with the worker's own count"),
        N_("the forward, dx and the gradients are right, and so is running_mean; running_var is "
           "not, and differs from worker to worker: the batch variance was multiplied by "
           "n_k / (n_k - 1), the worker's own count, instead of N / (N - 1)"),
        N_("The variance is the whole batch's, so is its unbiased correction: N / (N - 1) with N "
           "the global count from the all-reduce; every worker's running statistics must be "
           "the same."),
        {"sync_batchnorm": [((SYNC_UNBIASED, "var * n_k / (n_k - 1)"),)]},
        taught=solution("sync_batchnorm"),
    ),
    Mistake(
        "sync-bn-backward-not-reduced",
        N_("SyncBatchNorm's backward without its all-reduce"),
        N_("the forward, the running statistics and the local dgamma and dbeta are right; dx is "
           "not: its mean terms used this worker's sums of dy and dy * x_hat only (divided by N "
           "or by n_k), as if the other workers' rows did not depend on these inputs"),
        N_("Every output depends on every worker's inputs through the global mean and variance, "
           "so dx needs the GLOBAL sums of dy and dy * x_hat: one all-reduce of the two local "
           "sums (2C values), then dx = gamma * rstd * (dy - sum_dy / N - x_hat * sum_dy_xhat / N)."),
        {"sync_batchnorm": [
            ((SYNC_REDUCE, "got = local"),),
            ((SYNC_REDUCE, "got = local"),
             (SYNC_DX, "(dy - sum_dy / len(dy) - x_hat * sum_dy_xhat / len(dy))")),
        ]},
        taught=solution("sync_batchnorm"),
    ),
    Mistake(
        "sync-bn-one-round-variance",
        N_("SyncBatchNorm's variance as E[x**2] - E[x]**2 from one round of sums"),
        N_("right for ordinary inputs, off when the mean is large against the spread (a mean of "
           "1e5 with a spread of 2 loses about 9 of float64's 16 digits): the sums of x and of "
           "x**2 cancel catastrophically"),
        N_("Subtract the global mean before squaring: a second all-reduce of sum((x_k - mean)**2) "
           "after the first one gives the mean; or send each worker's (n_k, mean_k, M2_k) and "
           "merge them with Chan's formula, which is stable in one round."),
        {"sync_batchnorm": [((SYNC_SQDEV, "(x ** 2).sum(axis=0)"),
                             (SYNC_VAR, "var = got2 / N - mean ** 2"))]},
        taught=solution("sync_batchnorm"),
    ),
    Mistake(
        "sync-bn-mean-of-means",
        N_("SyncBatchNorm's mean averaged over the workers, not weighted by their counts"),
        N_("right when every shard has the same number of rows, wrong with uneven shards or an "
           "empty one: the global mean was taken as the plain average of the K workers' means, "
           "so the small shards weigh as much as the large ones"),
        N_("The batch's mean is the sum of every row over the count of every row: all-reduce "
           "[n_k, sum(x_k)] and divide, mean = S / N (or weight each worker's mean by n_k / N)."),
        {"sync_batchnorm": [((SYNC_COUNT, SYNC_LOCAL_MEAN),
                             (SYNC_MEAN, "mean = got[1:] / self.group.world_size"))]},
        taught=solution("sync_batchnorm"),
    ),
    Mistake(
        "sync-bn-local-statistics",
        N_("SyncBatchNorm that never communicates: a BatchNorm per worker"),
        N_("right with one worker, wrong with several: each worker normalised its shard with its "
           "own mean and variance and took its own sums in the backward, so the outputs, dx and "
           "the running statistics differ from the whole batch's (and an empty shard gives nan)"),
        N_("The statistics are the whole batch's: all-reduce [n_k, sum(x_k)] for the global "
           "mean, then the squared deviations for the variance; the backward all-reduces its two "
           "sums the same way."),
        {"sync_batchnorm": [((SYNC_REDUCE_SUMS, "got = sent"),
                             (SYNC_REDUCE_SQDEV, "((x - mean) ** 2).sum(axis=0)"),
                             (SYNC_REDUCE, "got = local"))]},
        taught=solution("sync_batchnorm"),
    ),
    Mistake(
        "sync-bn-dgamma-reduced",
        N_("SyncBatchNorm's dgamma and dbeta all-reduced across the workers"),
        N_("the forward, dx and the running statistics are right; each worker's dgamma and "
           "dbeta are not its local share but the sum over every worker, taken from the "
           "backward's all-reduce, so once data-parallel training averages the workers' "
           "gradients they are K times too large (K workers)"),
        N_("Each worker adds only its LOCAL share, sum(dy_k * x_hat_k) and sum(dy_k), into "
           "gamma.grad and beta.grad: data-parallel training all-reduces every parameter's "
           "gradient afterwards, this layer's like any other's."),
        {"sync_batchnorm": [((SYNC_DBETA, "got[:C]"), (SYNC_DGAMMA, "got[C:]"))]},
        taught=solution("sync_batchnorm"),
    ),
]
