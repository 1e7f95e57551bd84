"""NPU010 and threads: a session that threads run on is closed only after they are joined.

Queue runners (``tf.train.start_queue_runners(sess=sess, coord=coord)``), ``threading.Thread``
workers given the session or an object built with it: the close goes after ``coord.join(...)``
/ ``t.join()`` / ``for t in threads: t.join()`` in the same block, else the site is reported
with the join point named.
"""

from __future__ import annotations

from support.rules import assert_migrates, run_rules, sites
from support.session_close import close_reported

RULES = {"NPU010"}
TF = "import tensorflow as tf\n"

QUEUE_TRAINING = '''"""Train on TFRecords read through a queue."""
import time

import tensorflow as tf

from model import inference, loss_fn, read_and_decode

FLAGS = tf.app.flags.FLAGS


def run_training():
    with tf.Graph().as_default():
        images, labels = read_and_decode(FLAGS.train_file, FLAGS.batch_size)
        logits = inference(images)
        loss = loss_fn(logits, labels)
        train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
        init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())

        sess = tf.Session()
        sess.run(init_op)

        # Start input enqueue threads.
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)

        try:
            step = 0
            while not coord.should_stop():
                start_time = time.time()
                _, loss_value = sess.run([train_op, loss])
                duration = time.time() - start_time
                if step % 100 == 0:
                    print('Step %d: loss = %.2f (%.3f sec)' % (step, loss_value, duration))
                step += 1
        except tf.errors.OutOfRangeError:
            print('Done training for %d epochs, %d steps.' % (FLAGS.num_epochs, step))
        finally:
            # When done, ask the threads to stop.
            coord.request_stop()

        # Wait for threads to finish.
        coord.join(threads)
        print('training finished')
        export_summary(FLAGS.train_dir)


def main(_):
    run_training()


if __name__ == '__main__':
    tf.app.run()
'''


def test_queue_runners_joined_then_more_code() -> None:
    """Closed right after ``coord.join(threads)``: not before (the runners use the session),
    and not later than needed."""
    after = QUEUE_TRAINING.replace("        coord.join(threads)\n",
                                   "        coord.join(threads)\n        sess.close()\n")
    findings = assert_migrates(QUEUE_TRAINING, after, RULES)
    assert sites(findings) == [("NPU010", 19, 15, "migrated")]
    assert findings[0].message == (
        "inserted 'sess.close()' after the last statement using the session or what is built "
        "with it (threads) (Session.close() releases the NPU graph executor)")


def test_queue_runners_never_joined() -> None:
    """The CIFAR-10 multi-GPU trainer: threads started, the result dropped, no coordinator."""
    close_reported("def train():\n"
                   "    sess = tf.Session(config=tf.ConfigProto(allow_soft_placement=True))\n"
                   "    sess.run(init)\n"
                   "    tf.train.start_queue_runners(sess=sess)\n"
                   "    for step in range(FLAGS.max_steps):\n"
                   "        sess.run(train_op)\n"
                   "        if step % 1000 == 0:\n"
                   "            saver.save(sess, checkpoint_path, global_step=step)\n",
                   (3, 11, "sess is used by queue-runner threads created on line 5, never joined in the "
                   "same block; keep the threads (threads = tf.train.start_queue_runners(sess=..., "
                   "coord=coord)) and close it after coord.request_stop() and coord.join(threads)"))


def test_queue_runners_kept_but_not_joined_name_the_coordinator_join() -> None:
    close_reported("def train():\n"
                   "    sess = tf.Session()\n"
                   "    COORD = tf.train.Coordinator()\n"
                   "    threads = tf.train.start_queue_runners(sess, COORD)\n"
                   "    for step in range(100):\n"
                   "        sess.run(train_op)\n"
                   "    COORD.request_stop()\n",
                   (3, 11, "sess is used by queue-runner threads created on line 5, never joined in the "
                   "same block; close it after COORD.join(threads)"))


def test_a_join_that_may_not_run_is_named() -> None:
    close_reported("def train(wait):\n"
                   "    sess = tf.Session()\n"
                   "    coord = tf.train.Coordinator()\n"
                   "    threads = tf.train.start_queue_runners(sess=sess, coord=coord)\n"
                   "    sess.run(train_op)\n"
                   "    if wait:\n"
                   "        coord.join(threads)\n"
                   "    print('done')\n",
                   (3, 11, "sess is used by queue-runner threads created on line 5; close it after "
                   "coord.join(threads) (line 8) once that join surely runs: it is inside an if, a "
                   "loop or a try body, so the tool does not close it there"))


def test_coordinator_join_without_threads_joins_registered_queue_runners() -> None:
    before = ("def evaluate():\n"
              "    sess = tf.Session()\n"
              "    coord = tf.train.Coordinator()\n"
              "    tf.train.start_queue_runners(sess=sess, coord=coord)\n"
              "    try:\n"
              "        sess.run(eval_op)\n"
              "    finally:\n"
              "        coord.request_stop()\n"
              "        coord.join(stop_grace_period_secs=10)\n"
              "    print('evaluated')\n")
    after = before.replace("    print('evaluated')\n", "    sess.close()\n    print('evaluated')\n")
    assert sites(assert_migrates(TF + before, TF + after, RULES)) == [("NPU010", 3, 11, "migrated")]


def test_queue_runner_threads_extended_into_a_list_and_joined_in_a_loop() -> None:
    before = ("def train():\n"
              "    sess = tf.Session()\n"
              "    coord = tf.train.Coordinator()\n"
              "    threads = []\n"
              "    for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS):\n"
              "        threads.extend(qr.create_threads(sess, coord=coord, daemon=True, start=True))\n"
              "    for step in range(100):\n"
              "        sess.run(train_op)\n"
              "    coord.request_stop()\n"
              "    for t in threads:\n"
              "        t.join()\n"
              "    print('stopped')\n")
    after = before.replace("t.join()\n", "t.join()\n    sess.close()\n")
    assert sites(assert_migrates(TF + before, TF + after, RULES)) == [("NPU010", 3, 11, "migrated")]


A3C_WORKERS = '''import threading

import tensorflow as tf

from a3c import ACNet, Worker


def main(n_workers):
    sess = tf.Session()
    coord = tf.train.Coordinator()
    global_net = ACNet(sess, "global")
    workers = []
    worker_threads = []
    for i in range(n_workers):
        worker = Worker(sess, "w_%i" % i, global_net, coord)
        t = threading.Thread(target=worker.work)
        t.start()
        worker_threads.append(t)
    sess.run(tf.global_variables_initializer())
    coord.join(worker_threads)
    print("all workers finished")
'''


def test_holders_handed_to_threads_are_closed_after_the_join() -> None:
    after = A3C_WORKERS.replace("coord.join(worker_threads)\n", "coord.join(worker_threads)\n    sess.close()\n")
    findings = assert_migrates(A3C_WORKERS, after, RULES)
    assert sites(findings) == [("NPU010", 9, 11, "migrated")]
    assert findings[0].message == (
        "inserted 'sess.close()' after the last statement using the session or what is built "
        "with it (global_net, worker, t, worker_threads) (Session.close() releases the NPU "
        "graph executor)")


def test_holder_handed_to_a_thread_never_joined() -> None:
    close_reported("from threading import Thread\n"
                   "def main():\n"
                   "    sess = tf.Session()\n"
                   "    server = InferenceServer(sess, port=8080)\n"
                   "    t = Thread(target=server.serve_forever)\n"
                   "    t.daemon = True\n"
                   "    t.start()\n"
                   "    sess.run(warmup_op)\n",
                   (4, 11, "sess is used by a thread created on line 6, never joined in the same block; "
                   "close it after the threads are joined (t.join())"))


def test_session_passed_to_threads_in_a_comprehension_and_an_inline_thread() -> None:
    before = ("import threading as th\n"
              "def main():\n"
              "    sess = tf.Session()\n"
              "    workers = [th.Thread(target=work, args=(sess, i)) for i in range(4)]\n"
              "    for w in workers:\n"
              "        w.start()\n"
              "    [w.join() for w in workers]\n"
              "    print('ok')\n")
    after = before.replace("in workers]\n", "in workers]\n    sess.close()\n")
    assert sites(assert_migrates(TF + before, TF + after, RULES)) == [("NPU010", 4, 11, "migrated")]
    close_reported("import threading\n"
                   "def main():\n"
                   "    sess = tf.Session()\n"
                   "    threading.Thread(target=work, kwargs={'sess': sess}).start()\n"
                   "    sess.run(op)\n",
                   (4, 11, "sess is used by a thread created on line 5, never joined in the same block; "
                   "keep the thread, join it, and close it after the threads are joined"))


def test_a_started_holder_is_a_thread() -> None:
    """``runner.start()`` on an object built with the session: it may run in a thread of its
    own (a ``threading.Thread`` subclass), so it must be joined first."""
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    runner = FeedRunner(sess, batch_size=32)\n"
              "    runner.start()\n"
              "    sess.run(train_op)\n"
              "    runner.join()\n"
              "    print('ok')\n")
    after = before.replace("runner.join()\n", "runner.join()\n    sess.close()\n")
    assert sites(assert_migrates(TF + before, TF + after, RULES)) == [("NPU010", 3, 11, "migrated")]
    close_reported(before.replace("    runner.join()\n", ""), (3, 11,
                   "sess is used by a thread (runner.start()) created on line 5, never joined in the "
                   "same block; close it after the threads are joined (runner.join())"))


def test_no_close_before_a_return_while_the_threads_run() -> None:
    before = ("def train(flag):\n"
              "    sess = tf.Session()\n"
              "    coord = tf.train.Coordinator()\n"
              "    threads = tf.train.start_queue_runners(sess=sess, coord=coord)\n"
              "    if flag:\n"
              "        return None\n"
              "    sess.run(train_op)\n"
              "    coord.request_stop()\n"
              "    coord.join(threads)\n"
              "    return 1\n")
    after = before.replace("coord.join(threads)\n", "coord.join(threads)\n    sess.close()\n")
    new, findings = run_rules(TF + before, RULES)
    assert new == TF + after
    assert run_rules(new, RULES)[0] is None  # (the second run does not report the return again)
    assert sites(findings) == [("NPU010", 3, 11, "migrated"), ("NPU010", 7, 8, "unmigrated")]
    assert findings[1].message.startswith("close the session before this return (threads using "
                                          "sess may still be running here; join them before this return)")


def test_default_session_queue_runners_without_a_session_argument() -> None:
    """``tf.train.start_queue_runners()`` runs on the default session: an InteractiveSession."""
    close_reported("sess = tf.InteractiveSession()\n"
                   "tf.global_variables_initializer().run()\n"
                   "tf.train.start_queue_runners()\n"
                   "for i in range(100):\n"
                   "    train_step.run()\n",
                   (2, 7, "sess is used by queue-runner threads created on line 4, never joined in the "
                   "same block; keep the threads (threads = tf.train.start_queue_runners(sess=..., "
                   "coord=coord)) and close it after coord.request_stop() and coord.join(threads)"))


def test_a_function_of_the_file_that_starts_threads_on_its_parameter() -> None:
    close_reported("import threading\n"
                   "def start_feeders(sess, n):\n"
                   "    for i in range(n):\n"
                   "        threading.Thread(target=feed, args=(sess, i)).start()\n"
                   "\n"
                   "def main():\n"
                   "    sess = tf.Session()\n"
                   "    start_feeders(sess, 4)\n"
                   "    sess.run(train_op)\n",
                   (8, 11, "sess is used by threads that start_feeders() starts and does not join"))
