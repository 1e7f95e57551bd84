"""ONNX Runtime inference; mentions 'import tensorflow as tf' only in this docstring."""
import onnxruntime as ort
import tensorflow_datasets as tfds
import tensorflow_hub as hub
import numpy as np

sess = ort.InferenceSession("model.onnx")
ds = tfds.load("mnist", split="test")
ds = ds.batch(64)
for batch in tfds.as_numpy(ds):
    out = sess.run(None, {"input": batch["image"].astype(np.float32)})
TEMPLATE = """
import tensorflow as tf
sess = tf.Session()
"""
