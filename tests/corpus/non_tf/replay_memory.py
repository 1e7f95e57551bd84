import random
import numpy as np


class ReplayMemory(object):
    def __init__(self, capacity):
        self.capacity = capacity
        self.memory = []

    def batch(self, n):
        return random.sample(self.memory, n)


memory = ReplayMemory(10000)
samples = memory.batch(32)
