import numpy as np


class CrossEntropyLoss:
    def forward(self, logits, targets):
        logits -= np.max(logits, axis=1, keepdims=True)  # numerical stability
        logits_exp = np.exp(logits)
        probs = logits_exp / np.sum(logits_exp, axis=1, keepdims=True)
        N = logits.shape[0]
        correct_logprobs = logits[range(N), targets] - np.log(np.sum(logits_exp, axis=1))
        self.probs, self.targets = probs, targets
        return -np.sum(correct_logprobs) / N

    def backward(self, dloss=1.0):
        N = self.probs.shape[0]
        dscores = self.probs.copy()
        dscores[range(N), self.targets] -= 1
        dscores /= N
        return dscores * dloss
