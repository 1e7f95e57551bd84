"""Script to finetune AlexNet using Tensorflow."""
from npu_bridge.npu_init import *
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
import os

import numpy as np
import tensorflow as tf

from alexnet import AlexNet
from datagenerator import ImageDataGenerator
from datetime import datetime
Iterator = tf.data.Iterator

train_file = '/path/to/train.txt'
learning_rate = 0.01
num_epochs = 10
batch_size = 128
dropout_rate = 0.5
num_classes = 2
train_layers = ['fc8', 'fc7', 'fc6']

with tf.device('/cpu:0'):
    tr_data = ImageDataGenerator(train_file, mode='training', batch_size=batch_size,
                                 num_classes=num_classes, shuffle=True)
    train_dataset = tr_data.data

# 构造迭代器
iterator = Iterator.from_structure(train_dataset.output_types, train_dataset.output_shapes)
# 取batch数据
next_batch = iterator.get_next()
# 迭代器初始化
training_init_op = iterator.make_initializer(train_dataset)

x = tf.placeholder(tf.float32, [batch_size, 227, 227, 3])
y = tf.placeholder(tf.float32, [batch_size, num_classes])
keep_prob = tf.placeholder(tf.float32)

model = AlexNet(x, keep_prob, num_classes, train_layers)
score = model.fc8
var_list = [v for v in tf.trainable_variables() if v.name.split('/')[0] in train_layers]
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=score, labels=y))
train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, var_list=var_list)

# 变量初始化
init = tf.global_variables_initializer()
saver = tf.train.Saver()
config = tf.ConfigProto(allow_soft_placement=True)
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
sess = tf.Session(config=config)
sess.run(init)
model.load_initial_weights(sess)

# Get the number of training/validation steps per epoch
train_batches_per_epoch = int(np.floor(tr_data.data_size / batch_size))

print("{} Start training...".format(datetime.now()))
for epoch in range(num_epochs):
    # Initialize iterator with the training dataset
    sess.run(training_init_op)
    for step in range(train_batches_per_epoch):
        # get next batch of data
        img_batch, label_batch = sess.run(next_batch)
        # run the training op
        _, train_loss = sess.run([train_op, loss],
                                 feed_dict={x: img_batch, y: label_batch, keep_prob: dropout_rate})

    checkpoint_name = os.path.join('checkpoints', 'model_epoch' + str(epoch + 1) + '.ckpt')
    saver.save(sess, checkpoint_name)
sess.close()

print("{} Training finished".format(datetime.now()))
