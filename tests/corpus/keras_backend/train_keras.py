# -*- coding: utf-8 -*-
"""用 Keras 训练一个简单的 CNN（TF 1.x 后端）。"""
import os
import numpy as np
import tensorflow as tf
from keras import backend as K
from tensorflow.keras.layers import Dense, Dropout, Flatten, Conv2D
from tensorflow.keras.models import Sequential

# 限制显存按需增长
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
K.set_session(tf.Session(config=config))

batch_size = 128
num_classes = 10


def build_model(input_shape):
    model = Sequential()
    model.add(Conv2D(32, kernel_size=(3, 3), activation='relu', input_shape=input_shape))
    model.add(Dropout(0.25))  # 防止过拟合
    model.add(Flatten())
    model.add(Dense(128, activation='relu'))
    model.add(Dropout(0.5))
    model.add(Dense(num_classes, activation='softmax'))
    return model


if __name__ == '__main__':
    model = build_model((28, 28, 1))
    model.compile(loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'])
    x = np.zeros((256, 28, 28, 1), dtype=np.float32)
    y = np.zeros((256, num_classes), dtype=np.float32)
    model.fit(x, y, batch_size=batch_size, epochs=1)
