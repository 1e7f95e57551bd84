import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

a = tf.constant(1.0)
config = tf.ConfigProto()
config.graph_options.rewrite_options.disable_model_pruning = True
config.graph_options.rewrite_options.constant_folding = RewriterConfig.OFF
sess = tf.InteractiveSession(config=config)
print(sess.run(a))

server = tf.train.Server.create_local_server()
remote = tf.Session(server.target)
print(remote.run(a * 2))
remote.close()

for lr in [0.1, 0.01]:
    trial = tf.Session()
    trial.run(a)
