"""A PyTorch training loop: nothing here is TensorFlow."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import tensorboardX

# tensorflow-style comment: sess = tf.Session()  import tensorflow as tf


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(10, 2)

    def forward(self, x):
        return self.fc(self.drop(x))


def gelu(x):
    return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * torch.pow(x, 3))))


def main(dataset):
    loader = DataLoader(dataset, batch_size=32)
    batches = dataset.batch(32)
    net = Net()
    for xb, yb in loader:
        net(xb)
    assert len(predictions) == len(examples)
