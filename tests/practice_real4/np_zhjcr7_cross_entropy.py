# exercise: cross_entropy
# Source: github.com/ZHJCR7/Numpy_CNN_MNIST, cnn/losses.py, cross_entropy_loss(y_predict,
# y_true) -> (loss, dy) (Chinese comments, a NumPy CNN for MNIST).
# Ported: the function wrapped by the CrossEntropyLoss class; the integer targets one-hot
# encoded for it (it takes one-hot y_true); backward(dloss) multiplies the dy it returned by
# dloss. Kept: log of the softmax probabilities, the loss averaged over the batch but dy not
# divided by the batch size.
import numpy as np

"""
定义损失函数loss
"""


#交叉熵损失函数
def cross_entropy_loss(y_predict, y_true):
    """
    :param y_predict: 预测值,shape (N,d)，N为批量样本数
    :param y_true: 真实值,shape(N,d)
    :return:
    """

    y_shift = y_predict - np.max(y_predict, axis=-1, keepdims=True)
    y_exp = np.exp(y_shift)
    y_probability = y_exp / np.sum(y_exp, axis=-1, keepdims=True)
    loss = np.mean(np.sum(-y_true * np.log(y_probability), axis=-1))  # 损失函数
    dy = y_probability - y_true
    return loss, dy


class CrossEntropyLoss:
    def forward(self, logits, targets):
        y_true = np.eye(logits.shape[1], dtype=logits.dtype)[targets]
        loss, self.dy = cross_entropy_loss(logits, y_true)
        return loss

    def backward(self, dloss=1.0):
        return self.dy * dloss
