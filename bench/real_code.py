"""The real-code-shaped corpus: files shaped like real TF 1.x repositories', few sites each.

A real repository's model file holds layers and helpers with one ``tf.nn.dropout``; its
benchmark driver has one session among argparse code, helper classes and reporting; its
utilities import TensorFlow and hold no site at all. Selective parsing (issue 20) is measured
on this corpus: the bytes no rule can act on are most of every file.

The shape follows six public TF 1.x repositories' non-test TensorFlow files (issue 32,
``bench/README.md``): two in five are under 200 lines (:data:`SELECTIVE_MIN_LINES`: parsed
whole), the median is about 240 lines, one in sixteen runs past 1,000 (:data:`LENGTHS`); a
file has about ten top-level definitions, a third of them classes of several methods
(:data:`CLASS_SHARE`), and about three quarters of their lines use ``tf``
(:data:`PLAIN_SHARE` of the definitions in a TF file are plain Python).

Every file is valid Python 3 (:func:`real_code_files` asserts it with ``ast.parse``).
"""

from __future__ import annotations

import ast
import itertools
import random
import re
from typing import Callable, Iterator, Sequence

#: The kinds of file in the order files are made: most repositories' shares of each.
KINDS: tuple[str, ...] = ("model", "driver", "estimator", "pipeline", "summaries", "model",
                          "metrics", "plain", "checkpoint", "driver", "pipeline", "plain")
#: (lowest, highest line count, files in a hundred): the real repositories' file lengths.
LENGTHS: tuple[tuple[int, int, int], ...] = ((50, 185, 44), (185, 400, 28), (400, 900, 22),
                                              (1000, 4000, 6))
#: Of a file's top-level definitions, the share that are classes, and their methods.
CLASS_SHARE = 0.6
METHODS = (3, 7)
#: Of a TF file's top-level definitions, the share of plain Python (no ``tf``).
PLAIN_SHARE = 0.28
_DIRS = {"model": "models", "driver": "benchmarks", "estimator": "estimator", "pipeline": "data",
         "summaries": "utils", "metrics": "utils", "checkpoint": "utils", "plain": "tools"}


def real_code_files(count: int, rng: random.Random,
                    max_lines: int = 4_000) -> Iterator[tuple[str, str]]:
    """``count`` files of :data:`KINDS`, their lengths as :data:`LENGTHS` (at most ``max_lines``)."""
    lengths = [(low, high) for low, high, share in LENGTHS for _ in range(share)]
    rng.shuffle(lengths)  # each hundred files has the shares exactly
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        low, high = lengths[index % len(lengths)]
        text = _made(MAKERS[kind], rng, index, rng.randint(min(low, max_lines), min(high, max_lines)))
        ast.parse(text)  # a generator bug must not hand the engine a syntax error
        yield f"{_DIRS[kind]}/{kind}_{index:04d}.py", text


def _made(make: Callable[[random.Random, int, int], str], rng: random.Random, index: int,
          lines: int) -> str:
    """``make``'s file of about ``lines`` lines in all: its header, imports, site and
    ``__main__`` block included (each kind's own part is 30-150 lines: asked again for less)."""
    asked = lines
    for _ in range(3):
        text = make(rng, index, asked)
        excess = text.count("\n") - lines
        if excess <= lines // 10 or asked == lines // 4:
            break
        asked = max(asked - excess, lines // 4)
    return text


def _fill(rng: random.Random, fillers: Sequence[Callable[[random.Random, int], str]], lines: int,
          site: str = "", plain: bool = True) -> list[str]:
    """Top-level defs and classes from ``fillers`` (with ``plain``, a :data:`PLAIN_SHARE` of
    plain Python ones too) up to about ``lines`` lines, a :data:`CLASS_SHARE` of them classes
    of several, with ``site`` (the one definition a rule can act on) at a random place."""
    blocks: list[str] = []
    counter = itertools.count()

    while sum(block.count("\n") + 2 for block in blocks) < lines:
        kinds = _PLAIN_FILLERS if plain and rng.random() < PLAIN_SHARE else fillers
        if rng.random() < CLASS_SHARE:
            methods = [rng.choice(kinds)(rng, next(counter)) for _ in range(rng.randint(*METHODS))]
            blocks.append(_as_class(next(counter), methods))
        else:
            blocks.append(rng.choice(kinds)(rng, next(counter)))
    if site:
        blocks.insert(rng.randint(0, len(blocks)), site)
    return blocks


def _as_class(n: int, blocks: list[str]) -> str:
    """``blocks`` (top-level definitions) as the methods and inner classes of one class."""
    methods = [re.sub(r"^def (\w+)\(", r"def \1(self, ", block, count=1, flags=re.M) for block in blocks]
    body = "\n".join("".join(f"    {line}" if line.strip() else line
                             for line in method.splitlines(keepends=True)) for method in methods)
    return f"class Component{n}(object):\n    \"\"\"Parts of the model built together ({n}).\"\"\"\n\n{body}"


def _module(docstring: str, imports: str, blocks: list[str], main: str = "") -> str:
    parts = [f'# coding=utf-8\n# Copyright 2018 The Authors. All Rights Reserved.\n#\n'
             '# Licensed under the Apache License, Version 2.0 (the "License").\n'
             f'"""{docstring}"""\n\n{imports}', *blocks]
    if main:
        parts.append(f'if __name__ == "__main__":\n{main}')
    return "\n\n".join(part.rstrip("\n") + "\n" for part in parts)


_TF_IMPORTS = ("from __future__ import absolute_import\nfrom __future__ import division\n"
               "from __future__ import print_function\n\nimport collections\nimport copy\n"
               "import functools\nimport json\nimport math\nimport re\n\nimport numpy as np\n"
               "import six\nimport tensorflow as tf\n")
_ACT = ["tf.nn.relu", "tf.nn.elu", "tf.tanh", "tf.nn.sigmoid", "None", "tf.nn.relu6"]


# --- model code: layers, attention, initializers, shape helpers -----------------------------

def _conv_block(rng: random.Random, n: int) -> str:
    filters, kernel = rng.choice([32, 64, 128, 256]), rng.choice([1, 3, 5])
    return (f"def conv_bn_{n}(inputs, filters={filters}, kernel_size={kernel}, strides=1,\n"
            f"              training=False, data_format=\"channels_last\"):\n"
            f'    """Convolution, batch norm and activation (unit {n}).\n\n'
            "    Args:\n      inputs: a 4-D tensor.\n      filters: number of output channels.\n"
            "      kernel_size: the convolution's window.\n      strides: the stride.\n"
            "      training: whether batch norm updates its moving averages.\n\n"
            "    Returns:\n      The activated output tensor.\n    \"\"\"\n"
            f'    with tf.variable_scope("conv_bn_{n}"):\n'
            "        if strides > 1:\n"
            "            inputs = fixed_padding(inputs, kernel_size, data_format)\n"
            "        outputs = tf.layers.conv2d(\n"
            "            inputs=inputs, filters=filters, kernel_size=kernel_size, strides=strides,\n"
            "            padding=(\"SAME\" if strides == 1 else \"VALID\"), use_bias=False,\n"
            "            kernel_initializer=tf.variance_scaling_initializer(),\n"
            "            data_format=data_format)\n"
            "        outputs = tf.layers.batch_normalization(\n"
            "            outputs, axis=3 if data_format == \"channels_last\" else 1,\n"
            f"            momentum={rng.choice([0.9, 0.997, 0.99])}, epsilon=1e-5, training=training)\n"
            f"        return {rng.choice(_ACT[:4])}(outputs)\n")


def _dense_layer(rng: random.Random, n: int) -> str:
    act = rng.choice(_ACT)
    return (f"def projection_{n}(input_tensor, num_outputs, name=None, initializer_range=0.02):\n"
            f'    """A dense projection of the last dimension ({n}).\"\"\"\n'
            "    input_shape = get_shape_list(input_tensor)\n"
            "    width = input_shape[-1]\n"
            f'    with tf.variable_scope(name, default_name="projection_{n}"):\n'
            "        weights = tf.get_variable(\n"
            '            "kernel", [width, num_outputs],\n'
            "            initializer=tf.truncated_normal_initializer(stddev=initializer_range))\n"
            '        bias = tf.get_variable("bias", [num_outputs], initializer=tf.zeros_initializer())\n'
            "        flat = tf.reshape(input_tensor, [-1, width])\n"
            "        output = tf.nn.bias_add(tf.matmul(flat, weights), bias)\n"
            f"        activation = {act}\n"
            "        if activation is not None:\n"
            "            output = activation(output)\n"
            "        return tf.reshape(output, input_shape[:-1] + [num_outputs])\n")


def _attention(rng: random.Random, n: int) -> str:
    heads = rng.choice([4, 8, 12, 16])
    return (f"def attention_{n}(from_tensor, to_tensor, attention_mask=None, num_heads={heads},\n"
            "                size_per_head=64):\n"
            f'    """Multi-headed scaled dot-product attention ({n}).\n\n'
            "    from_tensor: [batch, from_len, width]; to_tensor: [batch, to_len, width].\n"
            '    """\n'
            "    batch, from_len, _ = get_shape_list(from_tensor, expected_rank=3)\n"
            "    to_len = get_shape_list(to_tensor, expected_rank=3)[1]\n\n"
            "    def transpose_for_scores(tensor, seq_length):\n"
            "        tensor = tf.reshape(tensor, [batch, seq_length, num_heads, size_per_head])\n"
            "        return tf.transpose(tensor, [0, 2, 1, 3])\n\n"
            '    query = tf.layers.dense(from_tensor, num_heads * size_per_head, name="query")\n'
            '    key = tf.layers.dense(to_tensor, num_heads * size_per_head, name="key")\n'
            '    value = tf.layers.dense(to_tensor, num_heads * size_per_head, name="value")\n'
            "    query = transpose_for_scores(query, from_len)\n"
            "    key = transpose_for_scores(key, to_len)\n"
            "    scores = tf.matmul(query, key, transpose_b=True)\n"
            "    scores = tf.multiply(scores, 1.0 / math.sqrt(float(size_per_head)))\n"
            "    if attention_mask is not None:\n"
            "        # Positions to attend get 0.0, masked ones -10000.0, before the softmax.\n"
            "        adder = (1.0 - tf.cast(tf.expand_dims(attention_mask, [1]), tf.float32)) * -10000.0\n"
            "        scores += adder\n"
            "    probs = tf.nn.softmax(scores)\n"
            "    value = transpose_for_scores(value, to_len)\n"
            "    context = tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])\n"
            "    return tf.reshape(context, [batch, from_len, num_heads * size_per_head])\n")


def _shape_helper(rng: random.Random, n: int) -> str:
    return (f"def get_shape_list_{n}(tensor, expected_rank=None, name=None):\n"
            '    """The shape of ``tensor`` as a list, static dimensions as ints."""\n'
            "    if name is None:\n"
            "        name = tensor.name\n"
            "    if expected_rank is not None:\n"
            "        assert_rank(tensor, expected_rank, name)\n"
            "    shape = tensor.shape.as_list()\n"
            "    non_static = [index for index, dim in enumerate(shape) if dim is None]\n"
            "    if not non_static:\n"
            "        return shape\n"
            "    dynamic = tf.shape(tensor)\n"
            "    for index in non_static:\n"
            "        shape[index] = dynamic[index]\n"
            "    return shape\n")


def _layer_class(rng: random.Random, n: int) -> str:
    name = rng.choice(["Residual", "Bottleneck", "Highway", "Gated", "Transformer"]) + f"Unit{n}"
    return (f"class {name}(object):\n"
            f'    """A {name} of the network, built once and called on many inputs."""\n\n'
            f"    def __init__(self, hidden_size={rng.choice([256, 512, 768])}, num_layers="
            f"{rng.randint(2, 12)}, name=\"{name.lower()}\"):\n"
            "        self.hidden_size = hidden_size\n"
            "        self.num_layers = num_layers\n"
            "        self.name = name\n"
            "        self._built = False\n\n"
            "    @property\n"
            "    def output_size(self):\n"
            "        return self.hidden_size\n\n"
            "    def __call__(self, inputs, training=False):\n"
            "        with tf.variable_scope(self.name, reuse=tf.AUTO_REUSE):\n"
            "            outputs = inputs\n"
            "            for layer in range(self.num_layers):\n"
            '                with tf.variable_scope("layer_%d" % layer):\n'
            "                    outputs = self._layer(outputs, training)\n"
            "            self._built = True\n"
            "            return outputs\n\n"
            "    def _layer(self, inputs, training):\n"
            f"        hidden = tf.layers.dense(inputs, self.hidden_size, activation={rng.choice(_ACT)})\n"
            "        hidden = tf.layers.batch_normalization(hidden, training=training)\n"
            "        gate = tf.layers.dense(inputs, self.hidden_size, activation=tf.nn.sigmoid)\n"
            "        return hidden * gate + inputs * (1.0 - gate)\n")


def _initializer(rng: random.Random, n: int) -> str:
    return (f"def create_initializer_{n}(initializer_range={rng.choice([0.02, 0.01, 0.1])}):\n"
            '    """A truncated-normal initializer with the given range."""\n'
            "    return tf.truncated_normal_initializer(stddev=initializer_range)\n\n\n"
            f"def embedding_lookup_{n}(input_ids, vocab_size, embedding_size=128):\n"
            '    """Embeddings of ``input_ids`` ([batch, seq]) from a new table."""\n'
            "    table = tf.get_variable(\n"
            f'        "embeddings_{n}", [vocab_size, embedding_size],\n'
            f"        initializer=create_initializer_{n}())\n"
            "    flat_ids = tf.reshape(input_ids, [-1])\n"
            "    output = tf.gather(table, flat_ids)\n"
            "    shape = get_shape_list(input_ids)\n"
            "    return tf.reshape(output, shape + [embedding_size]), table\n")


def _loss(rng: random.Random, n: int) -> str:
    smoothing = rng.choice([0.0, 0.1])
    return (f"def classification_loss_{n}(logits, labels, num_classes, weights=None):\n"
            '    """Mean cross entropy with optional label smoothing and example weights."""\n'
            "    one_hot = tf.one_hot(labels, depth=num_classes, dtype=tf.float32)\n"
            f"    smoothing = {smoothing}\n"
            "    if smoothing:\n"
            "        one_hot = one_hot * (1.0 - smoothing) + smoothing / num_classes\n"
            "    log_probs = tf.nn.log_softmax(logits, axis=-1)\n"
            "    per_example = -tf.reduce_sum(one_hot * log_probs, axis=-1)\n"
            "    if weights is None:\n"
            "        return tf.reduce_mean(per_example)\n"
            "    weights = tf.cast(weights, tf.float32)\n"
            "    return tf.reduce_sum(per_example * weights) / (tf.reduce_sum(weights) + 1e-5)\n")


def _schedule(rng: random.Random, n: int) -> str:
    return (f"def learning_rate_{n}(init_lr, num_train_steps, num_warmup_steps):\n"
            '    """Linear warm-up, then polynomial decay to zero."""\n'
            "    global_step = tf.train.get_or_create_global_step()\n"
            "    learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)\n"
            "    learning_rate = tf.train.polynomial_decay(\n"
            "        learning_rate, global_step, num_train_steps, end_learning_rate=0.0,\n"
            f"        power={rng.choice([1.0, 0.5, 2.0])}, cycle=False)\n"
            "    if num_warmup_steps:\n"
            "        steps = tf.cast(global_step, tf.float32)\n"
            "        warmup = init_lr * steps / float(num_warmup_steps)\n"
            "        is_warmup = tf.cast(steps < num_warmup_steps, tf.float32)\n"
            "        learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * warmup\n"
            "    return learning_rate\n")


def _decorated(rng: random.Random, n: int) -> str:
    return (f"def _scoped_{n}(default_name):\n"
            '    """Run the decorated layer function in its own variable scope."""\n'
            "    def decorator(function):\n"
            "        @functools.wraps(function)\n"
            "        def wrapper(*args, **kwargs):\n"
            "            scope = kwargs.pop(\"scope\", None)\n"
            "            with tf.variable_scope(scope, default_name=default_name):\n"
            "                return function(*args, **kwargs)\n"
            "        return wrapper\n"
            "    return decorator\n\n\n"
            f'@_scoped_{n}("pool_{n}")\n'
            f"def pooled_features_{n}(inputs, pool_size={rng.choice([2, 3])}):\n"
            '    """Max and average pooling, concatenated on the channels."""\n'
            "    max_pool = tf.layers.max_pooling2d(inputs, pool_size, strides=2, padding=\"same\")\n"
            "    avg_pool = tf.layers.average_pooling2d(inputs, pool_size, strides=2, padding=\"same\")\n"
            "    return tf.concat([max_pool, avg_pool], axis=-1)\n")


def _config_class(rng: random.Random, n: int) -> str:
    fields = rng.sample(["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                         "intermediate_size", "max_position_embeddings", "type_vocab_size"], 4)
    args = ", ".join(f"{field}={rng.randint(2, 4096)}" for field in fields)
    sets = "".join(f"        self.{field} = {field}\n" for field in fields)
    return (f"class ModelConfig{n}(object):\n"
            '    """Configuration of the model: sizes and regularisation."""\n\n'
            f"    def __init__(self, {args}):\n{sets}\n"
            "    @classmethod\n"
            "    def from_dict(cls, json_object):\n"
            "        config = cls()\n"
            "        for key, value in six.iteritems(json_object):\n"
            "            config.__dict__[key] = value\n"
            "        return config\n\n"
            "    @classmethod\n"
            "    def from_json_file(cls, json_file):\n"
            '        with tf.gfile.GFile(json_file, "r") as reader:\n'
            "            return cls.from_dict(json.loads(reader.read()))\n\n"
            "    def to_dict(self):\n"
            "        return copy.deepcopy(self.__dict__)\n\n"
            "    def to_json_string(self):\n"
            '        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\\n"\n')


_MODEL_FILLERS = [_conv_block, _dense_layer, _attention, _shape_helper, _layer_class,
                  _initializer, _loss, _schedule, _decorated, _config_class]


def _dropout_site(rng: random.Random) -> str:
    call = rng.choice(["tf.nn.dropout(input_tensor, 1.0 - dropout_prob)",
                       "tf.nn.dropout(input_tensor, rate=dropout_prob)",
                       "tf.nn.dropout(input_tensor, keep_prob=1.0 - dropout_prob)"])
    return ("def dropout(input_tensor, dropout_prob):\n"
            '    """Perform dropout.\n\n'
            "    Args:\n      input_tensor: float Tensor.\n"
            "      dropout_prob: the probability of dropping out a value (NOT of *keeping* a\n"
            "        dimension as in `tf.nn.dropout`).\n\n"
            "    Returns:\n      A version of `input_tensor` with dropout applied.\n    \"\"\"\n"
            "    if dropout_prob is None or dropout_prob == 0.0:\n"
            "        return input_tensor\n"
            f"    output = {call}\n"
            "    return output\n")


def model_file(rng: random.Random, index: int, lines: int) -> str:
    """A long model file: layers and helpers everywhere, one ``tf.nn.dropout``."""
    blocks = _fill(rng, _MODEL_FILLERS, lines, _dropout_site(rng))
    common = ("def get_shape_list(tensor, expected_rank=None, name=None):\n"
              '    """The shape of ``tensor``, static dimensions as ints."""\n'
              "    shape = tensor.shape.as_list()\n"
              "    dynamic = tf.shape(tensor)\n"
              "    return [dim if dim is not None else dynamic[i] for i, dim in enumerate(shape)]\n\n\n"
              "def assert_rank(tensor, expected_rank, name=None):\n"
              "    if tensor.shape.ndims != expected_rank:\n"
              '        raise ValueError("%s has rank %d, not %d" % (name, tensor.shape.ndims, expected_rank))\n\n\n'
              "def fixed_padding(inputs, kernel_size, data_format):\n"
              "    pad = (kernel_size - 1) // 2\n"
              "    return tf.pad(inputs, [[0, 0], [pad, pad], [pad, pad], [0, 0]])\n")
    return _module(f"The main model definition ({index}): layers, attention and losses.",
                   _TF_IMPORTS, [common, *blocks])


# --- a benchmark driver: flags, helpers, classes, one session -------------------------------

def _arg_group(rng: random.Random, n: int) -> str:
    options = rng.sample([("num_batches", "int", 100), ("num_warmup_batches", "int", 10),
                          ("display_every", "int", 10), ("model", "str", '"resnet50"'),
                          ("data_format", "str", '"NHWC"'), ("weight_decay", "float", 4e-5),
                          ("momentum", "float", 0.9), ("num_epochs", "float", 90.0),
                          ("train_dir", "str", "None"), ("variable_update", "str", '"replicated"')], 4)
    adds = "".join(f'    group.add_argument("--{name}_{n}", type={kind}, default={value},\n'
                   f'                       help="The {name.replace("_", " ")}.")\n'
                   for name, kind, value in options)
    return (f"def add_arguments_{n}(parser):\n"
            f'    """Options of part {n} of the benchmark."""\n'
            f'    group = parser.add_argument_group("part {n}")\n{adds}'
            "    return group\n")


def _timer_class(rng: random.Random, n: int) -> str:
    return (f"class StepTimer{n}(object):\n"
            '    """Wall time per step, skipping the warm-up steps."""\n\n'
            f"    def __init__(self, warmup={rng.randint(2, 20)}):\n"
            "        self.warmup = warmup\n"
            "        self.times = []\n"
            "        self._start = None\n\n"
            "    def __enter__(self):\n"
            "        self._start = time.time()\n"
            "        return self\n\n"
            "    def __exit__(self, *exc_info):\n"
            "        self.times.append(time.time() - self._start)\n"
            "        return False\n\n"
            "    @property\n"
            "    def measured(self):\n"
            "        return self.times[self.warmup:]\n\n"
            "    def images_per_sec(self, batch_size):\n"
            "        if not self.measured:\n"
            "            return 0.0\n"
            "        return batch_size / (sum(self.measured) / len(self.measured))\n\n"
            "    def summary(self, batch_size):\n"
            '        """One line: mean, standard deviation and throughput."""\n'
            "        mean = np.mean(self.measured) if self.measured else 0.0\n"
            "        std = np.std(self.measured) if self.measured else 0.0\n"
            '        return "%.3f s +/- %.3f (%.1f images/sec)" % (mean, std, self.images_per_sec(batch_size))\n')


def _report_fn(rng: random.Random, n: int) -> str:
    return (f"def format_results_{n}(results, precision={rng.choice([2, 3, 4])}):\n"
            '    """The results as an aligned table for the log."""\n'
            "    width = max(len(name) for name in results) if results else 0\n"
            "    lines = []\n"
            "    for name in sorted(results):\n"
            "        value = results[name]\n"
            "        if isinstance(value, float):\n"
            '            value = "%.*f" % (precision, value)\n'
            '        lines.append("%s  %s" % (name.ljust(width), value))\n'
            '    return "\\n".join(lines)\n\n\n'
            f"def log_fn_{n}(message, stream=sys.stdout):\n"
            '    """Print and flush: the benchmark log is read while it runs."""\n'
            '    stream.write(message + "\\n")\n'
            "    stream.flush()\n")


def _context_helper(rng: random.Random, n: int) -> str:
    return ("@contextlib.contextmanager\n"
            f"def timed_section_{n}(name, records):\n"
            '    """Record how long the block under ``with`` took, under ``name``."""\n'
            "    start = time.time()\n"
            "    try:\n"
            "        yield\n"
            "    finally:\n"
            "        records[name] = records.get(name, 0.0) + time.time() - start\n")


def _graph_builder(rng: random.Random, n: int) -> str:
    return (f"class ModelBuilder{n}(object):\n"
            '    """Builds the forward pass and the training op of one model."""\n\n'
            f"    def __init__(self, num_classes={rng.choice([10, 100, 1000])}, weight_decay=1e-4):\n"
            "        self.num_classes = num_classes\n"
            "        self.weight_decay = weight_decay\n\n"
            "    def logits(self, images, training):\n"
            "        net = images\n"
            "        for index, filters in enumerate([64, 128, 256]):\n"
            '            with tf.variable_scope("stage_%d" % index):\n'
            "                net = tf.layers.conv2d(net, filters, 3, padding=\"same\", activation=tf.nn.relu)\n"
            "                net = tf.layers.max_pooling2d(net, 2, 2)\n"
            "        net = tf.reduce_mean(net, axis=[1, 2])\n"
            "        return tf.layers.dense(net, self.num_classes)\n\n"
            "    def loss(self, logits, labels):\n"
            "        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)\n"
            "        l2 = tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])\n"
            "        return loss + self.weight_decay * l2\n\n"
            "    def train_op(self, loss, learning_rate):\n"
            "        optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)\n"
            "        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n"
            "        with tf.control_dependencies(update_ops):\n"
            "            return optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())\n")


def _synthetic_inputs(rng: random.Random, n: int) -> str:
    size = rng.choice([224, 299, 32])
    return (f"def synthetic_inputs_{n}(batch_size, image_size={size}, num_classes=1000):\n"
            '    """Random images and labels as variables: no input pipeline in the measure."""\n'
            "    images = tf.Variable(\n"
            "        tf.random_normal([batch_size, image_size, image_size, 3], dtype=tf.float32),\n"
            '        trainable=False, name="synthetic_images")\n'
            "    labels = tf.Variable(\n"
            "        tf.random_uniform([batch_size], minval=0, maxval=num_classes - 1, dtype=tf.int32),\n"
            '        trainable=False, name="synthetic_labels")\n'
            "    return images, labels\n")


_DRIVER_FILLERS = [_arg_group, _timer_class, _report_fn, _context_helper, _graph_builder,
                   _synthetic_inputs, _dense_layer, _conv_block]


def _session_site(rng: random.Random) -> str:
    if rng.random() < 0.5:
        session = ("    with tf.Session(config=config) as sess:\n"
                   "        sess.run(init)\n"
                   "        for step in range(args.num_warmup + args.num_batches):\n"
                   "            start = time.time()\n"
                   "            sess.run(train_op)\n"
                   "            if step >= args.num_warmup:\n"
                   "                times.append(time.time() - start)\n")
    else:
        session = ("    sess = tf.Session(config=config)\n"
                   "    sess.run(init)\n"
                   "    for step in range(args.num_warmup + args.num_batches):\n"
                   "        start = time.time()\n"
                   "        sess.run(train_op)\n"
                   "        if step >= args.num_warmup:\n"
                   "            times.append(time.time() - start)\n")
    return ("def run_benchmark(args, builder):\n"
            '    """Build the graph, then time ``num_batches`` training steps."""\n'
            "    tf.reset_default_graph()\n"
            "    images, labels = synthetic_inputs(args.batch_size)\n"
            "    logits = builder.logits(images, training=True)\n"
            "    loss = builder.loss(logits, labels)\n"
            "    train_op = builder.train_op(loss, args.learning_rate)\n"
            "    init = tf.global_variables_initializer()\n"
            "    config = tf.ConfigProto(intra_op_parallelism_threads=args.num_intra_threads,\n"
            "                            inter_op_parallelism_threads=args.num_inter_threads)\n"
            "    times = []\n"
            f"{session}"
            "    return args.batch_size * len(times) / max(sum(times), 1e-9)\n")


def driver_file(rng: random.Random, index: int, lines: int) -> str:
    """A benchmark driver: argparse, helper classes and functions, one ``tf.Session``."""
    imports = ("from __future__ import print_function\n\nimport argparse\nimport contextlib\n"
               "import functools\nimport math\nimport os\nimport sys\nimport time\n\n"
               "import numpy as np\nimport tensorflow as tf\n")
    common = ("def get_shape_list(tensor, expected_rank=None):\n"
              "    return tensor.shape.as_list()\n\n\n"
              "def fixed_padding(inputs, kernel_size, data_format):\n"
              "    pad = (kernel_size - 1) // 2\n"
              "    return tf.pad(inputs, [[0, 0], [pad, pad], [pad, pad], [0, 0]])\n\n\n"
              "def synthetic_inputs(batch_size):\n"
              "    images = tf.random_normal([batch_size, 224, 224, 3])\n"
              "    labels = tf.random_uniform([batch_size], maxval=999, dtype=tf.int32)\n"
              "    return images, labels\n\n\n"
              "def parse_args(argv=None):\n"
              '    parser = argparse.ArgumentParser(description="Benchmark a CNN on synthetic data.")\n'
              f'    parser.add_argument("--batch_size", type=int, default={rng.choice([32, 64, 128])})\n'
              '    parser.add_argument("--num_batches", type=int, default=100)\n'
              '    parser.add_argument("--num_warmup", type=int, default=10)\n'
              '    parser.add_argument("--learning_rate", type=float, default=0.1)\n'
              '    parser.add_argument("--num_intra_threads", type=int, default=0)\n'
              '    parser.add_argument("--num_inter_threads", type=int, default=0)\n'
              "    return parser.parse_args(argv)\n\n\n"
              "def main(argv=None):\n"
              "    args = parse_args(argv)\n"
              "    rate = run_benchmark(args, ModelBuilder())\n"
              '    print("total images/sec: %.2f" % rate)\n'
              "    return 0\n\n\n"
              "class ModelBuilder(BaseModelBuilder):\n"
              '    """The default model of the benchmark."""\n')
    blocks = _fill(rng, _DRIVER_FILLERS, lines, _session_site(rng))
    blocks.insert(0, _graph_builder(rng, 0).replace("ModelBuilder0", "BaseModelBuilder"))
    return _module(f"Benchmarks a CNN's training throughput on synthetic data ({index}).", imports,
                   [*blocks, common], "    sys.exit(main())\n")


# --- an Estimator model file: long model_fn code, one Estimator ------------------------------

def _metric_block(rng: random.Random, n: int) -> str:
    return (f"def metric_fn_{n}(per_example_loss, label_ids, logits, is_real_example):\n"
            '    """Accuracy and mean loss, weighted by the real (not padded) examples."""\n'
            "    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)\n"
            "    accuracy = tf.metrics.accuracy(\n"
            "        labels=label_ids, predictions=predictions, weights=is_real_example)\n"
            "    loss = tf.metrics.mean(values=per_example_loss, weights=is_real_example)\n"
            '    return {"eval_accuracy": accuracy, "eval_loss": loss}\n')


def _model_fn_builder(rng: random.Random, n: int) -> str:
    return (f"def model_fn_builder_{n}(num_labels, learning_rate, num_train_steps,\n"
            "                       num_warmup_steps, init_checkpoint=None):\n"
            f'    """A ``model_fn`` closure for the Estimator (variant {n})."""\n\n'
            "    def model_fn(features, labels, mode, params):\n"
            '        """The model_fn for the Estimator."""\n'
            '        input_ids = features["input_ids"]\n'
            '        label_ids = features["label_ids"]\n'
            "        is_training = mode == tf.estimator.ModeKeys.TRAIN\n"
            "        hidden = tf.layers.dense(tf.cast(input_ids, tf.float32), 256, activation=tf.tanh)\n"
            "        logits = tf.layers.dense(hidden, num_labels)\n"
            "        per_example_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(\n"
            "            labels=label_ids, logits=logits)\n"
            "        loss = tf.reduce_mean(per_example_loss)\n"
            "        if init_checkpoint:\n"
            '            tf.train.init_from_checkpoint(init_checkpoint, {"bert/": "bert/"})\n'
            "        if mode == tf.estimator.ModeKeys.TRAIN:\n"
            f"            lr = learning_rate_{n}(learning_rate, num_train_steps, num_warmup_steps)\n"
            "            optimizer = tf.train.AdamOptimizer(lr)\n"
            "            train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n"
            "            return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)\n"
            "        if mode == tf.estimator.ModeKeys.EVAL:\n"
            "            metrics = metric_fn_0(per_example_loss, label_ids, logits,\n"
            "                                  tf.ones_like(label_ids, dtype=tf.float32))\n"
            "            return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=metrics)\n"
            '        predictions = {"probabilities": tf.nn.softmax(logits, axis=-1)}\n'
            "        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)\n\n"
            "    return model_fn\n\n\n" + _schedule(rng, n))


def _feature_converter(rng: random.Random, n: int) -> str:
    return (f"class InputExample{n}(object):\n"
            '    """A single training/test example for sequence classification."""\n\n'
            "    def __init__(self, guid, text_a, text_b=None, label=None):\n"
            "        self.guid = guid\n"
            "        self.text_a = text_a\n"
            "        self.text_b = text_b\n"
            "        self.label = label\n\n\n"
            f"def convert_example_{n}(example, label_list, max_seq_length, tokenize):\n"
            '    """Token ids, padded to ``max_seq_length``, and the label id."""\n'
            "    label_map = {label: i for i, label in enumerate(label_list)}\n"
            "    tokens = tokenize(example.text_a)\n"
            "    if example.text_b:\n"
            '        tokens += ["[SEP]"] + tokenize(example.text_b)\n'
            "    tokens = tokens[:max_seq_length]\n"
            "    input_ids = [hash(token) % 30522 for token in tokens]\n"
            "    input_ids += [0] * (max_seq_length - len(input_ids))\n"
            "    return collections.OrderedDict(\n"
            "        input_ids=input_ids, label_ids=label_map.get(example.label, 0))\n")


_ESTIMATOR_FILLERS = [_metric_block, _model_fn_builder, _feature_converter, _dense_layer,
                      _attention, _loss, _config_class, _shape_helper]


def _estimator_site(rng: random.Random) -> str:
    summary = rng.choice(["", ",\n        save_summary_steps=FLAGS.save_summary_steps"])
    return ("def build_estimator(num_labels, num_train_steps, num_warmup_steps):\n"
            '    """The Estimator that trains, evaluates and predicts the classifier."""\n'
            "    model_fn = model_fn_builder_0(\n"
            "        num_labels=num_labels, learning_rate=FLAGS.learning_rate,\n"
            "        num_train_steps=num_train_steps, num_warmup_steps=num_warmup_steps,\n"
            "        init_checkpoint=FLAGS.init_checkpoint)\n"
            "    run_config = tf.estimator.RunConfig(\n"
            "        model_dir=FLAGS.output_dir,\n"
            f"        save_checkpoints_steps=FLAGS.save_checkpoints_steps{summary})\n"
            "    return tf.estimator.Estimator(\n"
            "        model_fn=model_fn, config=run_config,\n"
            '        params={"batch_size": FLAGS.train_batch_size})\n')


def estimator_file(rng: random.Random, index: int, lines: int) -> str:
    """An Estimator classifier: feature code, ``model_fn`` builders, one Estimator."""
    flags = ("flags = tf.flags\nFLAGS = flags.FLAGS\n\n"
             'flags.DEFINE_string("output_dir", None, "Where checkpoints are written.")\n'
             'flags.DEFINE_string("init_checkpoint", None, "A pre-trained checkpoint.")\n'
             'flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")\n'
             'flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")\n'
             'flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save.")\n'
             'flags.DEFINE_integer("save_summary_steps", 100, "How often to write summaries.")\n')
    main = ("def main(_):\n"
            "    tf.logging.set_verbosity(tf.logging.INFO)\n"
            '    tf.gfile.MakeDirs(FLAGS.output_dir)\n'
            "    estimator = build_estimator(num_labels=2, num_train_steps=1000, num_warmup_steps=100)\n"
            '    tf.logging.info("built %s", estimator)\n')
    blocks = [_metric_block(rng, 0), _model_fn_builder(rng, 0),
              *_fill(rng, _ESTIMATOR_FILLERS, lines, _estimator_site(rng)), main]
    return _module(f"BERT-style finetuning runner for classification ({index}).",
                   _TF_IMPORTS + "\n" + flags, blocks,
                   '    flags.mark_flag_as_required("output_dir")\n    tf.app.run()\n')


# --- data pipelines: parsing, augmentation, one dataset.batch --------------------------------

def _parse_fn(rng: random.Random, n: int) -> str:
    size = rng.choice([128, 256, 512])
    return (f"def parse_record_{n}(serialized, max_seq_length={size}):\n"
            '    """One serialized tf.Example to a dict of int32 tensors."""\n'
            "    name_to_features = {\n"
            '        "input_ids": tf.FixedLenFeature([max_seq_length], tf.int64),\n'
            '        "input_mask": tf.FixedLenFeature([max_seq_length], tf.int64),\n'
            '        "label_ids": tf.FixedLenFeature([], tf.int64),\n'
            "    }\n"
            "    example = tf.parse_single_example(serialized, name_to_features)\n"
            "    # tf.Example only supports tf.int64, but the TPU only supports tf.int32.\n"
            "    for name in list(example.keys()):\n"
            "        tensor = example[name]\n"
            "        if tensor.dtype == tf.int64:\n"
            "            tensor = tf.to_int32(tensor)\n"
            "        example[name] = tensor\n"
            "    return example\n")


def _augment(rng: random.Random, n: int) -> str:
    size = rng.choice([224, 299, 32])
    return (f"def preprocess_image_{n}(image, is_training, image_size={size}):\n"
            '    """Decode, crop or resize, flip and scale one image."""\n'
            "    image = tf.image.convert_image_dtype(image, dtype=tf.float32)\n"
            "    if is_training:\n"
            "        image = tf.image.resize_image_with_crop_or_pad(image, image_size + 8, image_size + 8)\n"
            "        image = tf.random_crop(image, [image_size, image_size, 3])\n"
            "        image = tf.image.random_flip_left_right(image)\n"
            "        image = tf.image.random_brightness(image, max_delta=32.0 / 255.0)\n"
            "    else:\n"
            "        image = tf.image.resize_images(image, [image_size, image_size])\n"
            "    image = tf.subtract(image, 0.5)\n"
            "    return tf.multiply(image, 2.0)\n")


def _file_lister(rng: random.Random, n: int) -> str:
    return (f"def list_files_{n}(data_dir, split, pattern=\"*.tfrecord\"):\n"
            '    """The shard files of one split, sorted so every worker sees the same order."""\n'
            "    files = tf.gfile.Glob(os.path.join(data_dir, split, pattern))\n"
            "    if not files:\n"
            '        raise ValueError("no files match %s" % os.path.join(data_dir, split, pattern))\n'
            "    return sorted(files)\n\n\n"
            f"def count_records_{n}(files):\n"
            '    """How many records the files hold (slow: reads them all)."""\n'
            "    return sum(1 for path in files for _ in tf.python_io.tf_record_iterator(path))\n")


def _vocab_class(rng: random.Random, n: int) -> str:
    return (f"class Vocabulary{n}(object):\n"
            '    """Token <-> id maps loaded from a vocabulary file, one token per line."""\n\n'
            "    def __init__(self, path, unk_token=\"[UNK]\"):\n"
            "        self.unk_token = unk_token\n"
            "        self.token_to_id = collections.OrderedDict()\n"
            '        with tf.gfile.GFile(path, "r") as reader:\n'
            "            for index, line in enumerate(reader):\n"
            "                self.token_to_id[line.strip()] = index\n"
            "        self.id_to_token = {v: k for k, v in self.token_to_id.items()}\n\n"
            "    def __len__(self):\n"
            "        return len(self.token_to_id)\n\n"
            "    def encode(self, tokens):\n"
            "        unk = self.token_to_id.get(self.unk_token, 0)\n"
            "        return [self.token_to_id.get(token, unk) for token in tokens]\n\n"
            "    def decode(self, ids):\n"
            "        return [self.id_to_token.get(i, self.unk_token) for i in ids]\n")


_PIPELINE_FILLERS = [_parse_fn, _augment, _file_lister, _vocab_class]


def _batch_site(rng: random.Random) -> str:
    batch = rng.choice(["dataset.batch(batch_size)", "dataset.batch(batch_size=batch_size)",
                        "dataset.batch(batch_size, drop_remainder=is_training)"])
    return ("def input_fn_builder(files, batch_size, is_training, num_cpu_threads=4):\n"
            '    """The input pipeline: interleaved shards, shuffled, parsed, batched."""\n'
            "    dataset = tf.data.Dataset.from_tensor_slices(tf.constant(files))\n"
            "    if is_training:\n"
            "        dataset = dataset.shuffle(buffer_size=len(files))\n"
            "    dataset = dataset.repeat()\n"
            "    dataset = dataset.interleave(\n"
            "        tf.data.TFRecordDataset, cycle_length=min(num_cpu_threads, len(files)))\n"
            "    dataset = dataset.map(parse_record_0, num_parallel_calls=num_cpu_threads)\n"
            f"    dataset = {batch}\n"
            "    return dataset.prefetch(2)\n")


def pipeline_file(rng: random.Random, index: int, lines: int) -> str:
    """Data-pipeline utilities: record parsing, augmentation, one ``dataset.batch``."""
    imports = "import collections\nimport os\n\nimport tensorflow as tf\n"
    blocks = [_parse_fn(rng, 0), *_fill(rng, _PIPELINE_FILLERS, lines, _batch_site(rng))]
    return _module(f"Input pipelines for the TFRecord shards ({index}).", imports, blocks,
                   '    print(list_files_0("/tmp/data", "train"))\n' if "list_files_0" in
                   "".join(blocks) else "    print(parse_record_0)\n")


# --- utilities that import TensorFlow and hold no site ---------------------------------------

def _summary_fn(rng: random.Random, n: int) -> str:
    return (f"def add_summaries_{n}(tensors, prefix=\"train\", histograms=False):\n"
            '    """Scalar summaries of every tensor, and histograms when asked."""\n'
            "    summaries = []\n"
            "    for name, tensor in sorted(tensors.items()):\n"
            '        tag = "%s/%s" % (prefix, name)\n'
            "        if tensor.shape.ndims == 0:\n"
            "            summaries.append(tf.summary.scalar(tag, tensor))\n"
            "        elif histograms:\n"
            "            summaries.append(tf.summary.histogram(tag, tensor))\n"
            "    return tf.summary.merge(summaries) if summaries else None\n\n\n"
            f"def image_summary_{n}(name, images, max_outputs={rng.choice([3, 4, 8])}):\n"
            '    """Images scaled back from [-1, 1] to [0, 1] for TensorBoard."""\n'
            "    return tf.summary.image(name, (images + 1.0) / 2.0, max_outputs=max_outputs)\n")


def _writer_class(rng: random.Random, n: int) -> str:
    return (f"class SummaryWriter{n}(object):\n"
            '    """Writes Python scalars as summaries, without a graph op per value."""\n\n'
            "    def __init__(self, logdir, flush_secs=30):\n"
            "        self.writer = tf.summary.FileWriter(logdir, flush_secs=flush_secs)\n\n"
            "    def scalar(self, tag, value, step):\n"
            "        summary = tf.Summary(value=[tf.Summary.Value(tag=tag, simple_value=float(value))])\n"
            "        self.writer.add_summary(summary, step)\n\n"
            "    def scalars(self, values, step):\n"
            "        for tag, value in sorted(values.items()):\n"
            "            self.scalar(tag, value, step)\n\n"
            "    def close(self):\n"
            "        self.writer.flush()\n"
            "        self.writer.close()\n")


def _metric_fn(rng: random.Random, n: int) -> str:
    k = rng.choice([1, 3, 5])
    return (f"def top_k_accuracy_{n}(logits, labels, k={k}):\n"
            '    """The share of examples whose label is among the ``k`` best logits."""\n'
            "    correct = tf.nn.in_top_k(logits, labels, k)\n"
            "    return tf.reduce_mean(tf.cast(correct, tf.float32))\n\n\n"
            f"def streaming_f1_{n}(labels, predictions, weights=None):\n"
            '    """Precision, recall and their harmonic mean as streaming metrics."""\n'
            "    precision, precision_op = tf.metrics.precision(labels, predictions, weights=weights)\n"
            "    recall, recall_op = tf.metrics.recall(labels, predictions, weights=weights)\n"
            "    f1 = 2.0 * precision * recall / (precision + recall + 1e-8)\n"
            "    return f1, tf.group(precision_op, recall_op)\n")


def _numpy_metric(rng: random.Random, n: int) -> str:
    return (f"def confusion_matrix_{n}(labels, predictions, num_classes):\n"
            '    """A numpy confusion matrix: rows are labels, columns predictions."""\n'
            "    matrix = np.zeros((num_classes, num_classes), dtype=np.int64)\n"
            "    for label, prediction in zip(labels, predictions):\n"
            "        matrix[label, prediction] += 1\n"
            "    return matrix\n\n\n"
            f"def per_class_recall_{n}(matrix):\n"
            "    totals = matrix.sum(axis=1)\n"
            "    return np.where(totals > 0, np.diag(matrix) / np.maximum(totals, 1), 0.0)\n")


def _checkpoint_fn(rng: random.Random, n: int) -> str:
    return (f"def assignment_map_{n}(tvars, init_checkpoint):\n"
            '    """The variables of the graph found in the checkpoint, by name."""\n'
            "    name_to_variable = collections.OrderedDict()\n"
            "    for var in tvars:\n"
            '        match = re.match("^(.*):\\\\d+$", var.name)\n'
            "        name = match.group(1) if match else var.name\n"
            "        name_to_variable[name] = var\n"
            "    assignment_map = collections.OrderedDict()\n"
            "    initialized = {}\n"
            "    for name, _ in tf.train.list_variables(init_checkpoint):\n"
            "        if name in name_to_variable:\n"
            "            assignment_map[name] = name\n"
            "            initialized[name] = 1\n"
            '            initialized[name + ":0"] = 1\n'
            "    return assignment_map, initialized\n\n\n"
            f"def latest_step_{n}(model_dir):\n"
            '    """The global step of the newest checkpoint in ``model_dir``, or 0."""\n'
            "    path = tf.train.latest_checkpoint(model_dir)\n"
            "    if path is None:\n"
            "        return 0\n"
            '    return int(path.rsplit("-", 1)[-1])\n')


def _saver_class(rng: random.Random, n: int) -> str:
    return (f"class BestCheckpointKeeper{n}(object):\n"
            '    """Keeps the ``keep`` checkpoints with the best metric, deletes the rest."""\n\n'
            f"    def __init__(self, model_dir, keep={rng.randint(1, 5)}, higher_is_better=True):\n"
            "        self.model_dir = model_dir\n"
            "        self.keep = keep\n"
            "        self.higher_is_better = higher_is_better\n"
            "        self.scores = {}\n\n"
            "    def record(self, path, score):\n"
            "        self.scores[path] = score\n"
            "        ranked = sorted(self.scores, key=self.scores.get, reverse=self.higher_is_better)\n"
            "        for stale in ranked[self.keep:]:\n"
            '            for suffix in (".index", ".meta", ".data-00000-of-00001"):\n'
            "                if tf.gfile.Exists(stale + suffix):\n"
            "                    tf.gfile.Remove(stale + suffix)\n"
            "            del self.scores[stale]\n\n"
            "    @property\n"
            "    def best(self):\n"
            "        if not self.scores:\n"
            "            return None\n"
            "        pick = max if self.higher_is_better else min\n"
            "        return pick(self.scores, key=self.scores.get)\n")


def tf_utility_file(fillers: list[Callable[[random.Random, int], str]], topic: str):
    def make(rng: random.Random, index: int, lines: int) -> str:
        return _module(f"Helpers for {topic} ({index}).", _TF_IMPORTS, _fill(rng, fillers, lines))
    return make


# --- plain Python: tools of the repository that never import TensorFlow ----------------------

def _plain_fn(rng: random.Random, n: int) -> str:
    verb = rng.choice(["load", "merge", "count", "split", "render", "validate"])
    noun = rng.choice(["record", "row", "event", "result", "line", "sample"])
    return (f"def {verb}_{noun}s_{n}(rows, limit=None):\n"
            f'    """{verb.capitalize()} {noun}s and count them by kind."""\n'
            "    counts = {}\n"
            "    for number, row in enumerate(rows):\n"
            "        if limit is not None and number >= limit:\n"
            '            log.warning("stopped after %d rows", limit)\n'
            "            break\n"
            f'        kind = str(row.get("kind", "{noun}")).lower()\n'
            "        counts[kind] = counts.get(kind, 0) + 1\n"
            "    return {key: counts[key] for key in sorted(counts)}\n")


def _plain_class(rng: random.Random, n: int) -> str:
    return (f"class ResultTable{n}(object):\n"
            '    """Rows of results, written as CSV or Markdown."""\n\n'
            "    def __init__(self, columns):\n"
            "        self.columns = list(columns)\n"
            "        self.rows = []\n\n"
            "    def add(self, **values):\n"
            "        self.rows.append([values.get(column, \"\") for column in self.columns])\n\n"
            "    def to_csv(self, path):\n"
            '        with open(path, "w", newline="") as handle:\n'
            "            writer = csv.writer(handle)\n"
            "            writer.writerow(self.columns)\n"
            "            writer.writerows(self.rows)\n\n"
            "    def to_markdown(self):\n"
            '        lines = ["| " + " | ".join(self.columns) + " |"]\n'
            '        lines.append("|" + "---|" * len(self.columns))\n'
            '        lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in self.rows]\n'
            '        return "\\n".join(lines)\n')


def plain_file(rng: random.Random, index: int, lines: int) -> str:
    imports = "import argparse\nimport csv\nimport json\nimport logging\nimport os\n\nlog = logging.getLogger(__name__)\n"
    return _module(f"Command-line tools for the experiment logs ({index}).", imports,
                   _fill(rng, _PLAIN_FILLERS, lines, plain=False),
                   '    logging.basicConfig(level=logging.INFO)\n    print(json.dumps({"ok": True}))\n')


_PLAIN_FILLERS = [_plain_fn, _plain_class]

MAKERS: dict[str, Callable[[random.Random, int, int], str]] = {
    "model": model_file, "driver": driver_file, "estimator": estimator_file,
    "pipeline": pipeline_file,
    "summaries": tf_utility_file([_summary_fn, _writer_class], "TensorBoard summaries"),
    "metrics": tf_utility_file([_metric_fn, _numpy_metric], "evaluation metrics"),
    "checkpoint": tf_utility_file([_checkpoint_fn, _saver_class], "checkpoints"),
    "plain": plain_file,
}
