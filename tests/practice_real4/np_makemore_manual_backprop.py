# exercise: mlp_with_batchnorm
# Source: Andrej Karpathy, "Building makemore Part 4: Becoming a Backprop Ninja",
# github.com/karpathy/nn-zero-to-hero lectures/makemore/makemore_part4_backprop.ipynb: the
# forward "chunkated into smaller steps" and exercise 1's line-by-line backward.
# Ported from torch to NumPy: the embedding lookup dropped (x is the concatenated input
# embcat), W1/b1/bngain/bnbias/W2/b2 are the contract's w1/b1/gamma/beta/w2/b2; the gradients
# are added into .grad and dlogprobs carries dloss; F.one_hot of the argmax is np.eye(...)[...].
# Kept: the batch variance with Bessel's correction 1/(n-1) in the normalisation (the notebook's
# choice), differentiated as such (1.0/(n-1) in dbndiff2); logprobs = log(probs) and
# dprobs = (1.0 / probs) * dlogprobs; eps = 1e-5 as in the notebook.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MLPWithBatchNorm:
    def __init__(self, n_in, n_hidden, n_classes, rng=0):
        rng = np.random.default_rng(rng)
        self.eps = 1e-5
        self.w1 = Parameter(rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in))
        self.b1 = Parameter(np.zeros(n_hidden))
        self.gamma = Parameter(np.ones(n_hidden))
        self.beta = Parameter(np.zeros(n_hidden))
        self.w2 = Parameter(rng.standard_normal((n_hidden, n_classes)) / np.sqrt(n_hidden))
        self.b2 = Parameter(np.zeros(n_classes))

    def forward(self, embcat, Yb):
        W1, b1, bngain, bnbias = self.w1.data, self.b1.data, self.gamma.data, self.beta.data
        W2, b2 = self.w2.data, self.b2.data
        n = embcat.shape[0]
        # Linear layer 1
        hprebn = embcat @ W1 + b1 # hidden layer pre-activation
        # BatchNorm layer
        bnmeani = 1/n*hprebn.sum(0, keepdims=True)
        bndiff = hprebn - bnmeani
        bndiff2 = bndiff**2
        bnvar = 1/(n-1)*(bndiff2).sum(0, keepdims=True) # note: Bessel's correction (dividing by n-1, not n)
        bnvar_inv = (bnvar + 1e-5)**-0.5
        bnraw = bndiff * bnvar_inv
        hpreact = bngain * bnraw + bnbias
        # Non-linearity
        h = np.tanh(hpreact) # hidden layer
        # Linear layer 2
        logits = h @ W2 + b2 # output layer
        # cross entropy loss (same as F.cross_entropy(logits, Yb))
        logit_maxes = logits.max(1, keepdims=True)
        norm_logits = logits - logit_maxes # subtract max for numerical stability
        counts = np.exp(norm_logits)
        counts_sum = counts.sum(1, keepdims=True)
        counts_sum_inv = counts_sum**-1 # if I use (1.0 / counts_sum) instead then I can't get backprop to be bit exact...
        probs = counts * counts_sum_inv
        logprobs = np.log(probs)
        loss = -logprobs[range(n), Yb].mean()
        self.saved = dict(embcat=embcat, Yb=Yb, hprebn=hprebn, bndiff=bndiff, bndiff2=bndiff2,
                          bnvar=bnvar, bnvar_inv=bnvar_inv, bnraw=bnraw, h=h, logits=logits,
                          norm_logits=norm_logits, counts=counts, counts_sum=counts_sum,
                          counts_sum_inv=counts_sum_inv, probs=probs, logprobs=logprobs)
        return loss

    def backward(self, dloss=1.0):
        s = self.saved
        embcat, Yb, hprebn, bndiff, bndiff2 = s["embcat"], s["Yb"], s["hprebn"], s["bndiff"], s["bndiff2"]
        bnvar, bnvar_inv, bnraw, h, logits = s["bnvar"], s["bnvar_inv"], s["bnraw"], s["h"], s["logits"]
        counts, counts_sum, counts_sum_inv = s["counts"], s["counts_sum"], s["counts_sum_inv"]
        probs, logprobs = s["probs"], s["logprobs"]
        W1, bngain, W2 = self.w1.data, self.gamma.data, self.w2.data
        n = embcat.shape[0]

        dlogprobs = np.zeros_like(logprobs)
        dlogprobs[range(n), Yb] = -1.0/n * dloss
        dprobs = (1.0 / probs) * dlogprobs
        dcounts_sum_inv = (counts * dprobs).sum(1, keepdims=True)
        dcounts = counts_sum_inv * dprobs
        dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
        dcounts += np.ones_like(counts) * dcounts_sum
        dnorm_logits = counts * dcounts
        dlogits = dnorm_logits.copy()
        dlogit_maxes = (-dnorm_logits).sum(1, keepdims=True)
        dlogits += np.eye(logits.shape[1])[logits.argmax(1)] * dlogit_maxes
        dh = dlogits @ W2.T
        dW2 = h.T @ dlogits
        db2 = dlogits.sum(0)
        dhpreact = (1.0 - h**2) * dh
        dbngain = (bnraw * dhpreact).sum(0, keepdims=True)
        dbnraw = bngain * dhpreact
        dbnbias = dhpreact.sum(0, keepdims=True)
        dbndiff = bnvar_inv * dbnraw
        dbnvar_inv = (bndiff * dbnraw).sum(0, keepdims=True)
        dbnvar = (-0.5*(bnvar + 1e-5)**-1.5) * dbnvar_inv
        dbndiff2 = (1.0/(n-1))*np.ones_like(bndiff2) * dbnvar
        dbndiff += (2*bndiff) * dbndiff2
        dhprebn = dbndiff.copy()
        dbnmeani = (-dbndiff).sum(0)
        dhprebn += 1.0/n * (np.ones_like(hprebn) * dbnmeani)
        dembcat = dhprebn @ W1.T
        dW1 = embcat.T @ dhprebn
        db1 = dhprebn.sum(0)

        self.w1.grad += dW1
        self.b1.grad += db1
        self.gamma.grad += dbngain.reshape(-1)
        self.beta.grad += dbnbias.reshape(-1)
        self.w2.grad += dW2
        self.b2.grad += db2
        return dembcat
