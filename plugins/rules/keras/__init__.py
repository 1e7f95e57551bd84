"""The ``keras`` pack (NPU041-NPU042): Keras on TensorFlow 1.x runs in a session the NPU configures."""
