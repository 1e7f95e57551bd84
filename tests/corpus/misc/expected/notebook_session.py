from npu_bridge.npu_init import *
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

a = tf.constant(1.0)
config = tf.ConfigProto()
config.graph_options.rewrite_options.disable_model_pruning = False
config.graph_options.rewrite_options.constant_folding = RewriterConfig.ON
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
sess = tf.InteractiveSession(config=config)
print(sess.run(a))

server = tf.train.Server.create_local_server()
npu_config = tf.ConfigProto()
custom_op = npu_config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
npu_config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
npu_config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
remote = tf.Session(server.target, config=npu_config)
print(remote.run(a * 2))
remote.close()

for lr in [0.1, 0.01]:
    trial = tf.Session(config=npu_config)
    trial.run(a)
    trial.close()
sess.close()
