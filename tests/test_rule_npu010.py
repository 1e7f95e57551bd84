"""NPU010 session-close: bare sessions get close() after their last use; the rest is reported."""

from __future__ import annotations

import pytest

from support.rules import Golden, assert_migrates, assert_unchanged, run_rules, sites

RULES = {"NPU010"}
TF = "import tensorflow as tf\n"
NPU010 = Golden("NPU010", header=TF)
INSERTED = ("inserted 'sess.close()' after the last statement using the session "
            "(Session.close() releases the NPU graph executor)")
CLOSE = "call close() on this session when training ends"


# --- Inserting close() ------------------------------------------------------------------------


def test_the_guide_training_loop() -> None:
    before = ("init = tf.global_variables_initializer()\n"
              "sess = tf.Session()\n"
              "sess.run(init)\n"
              "\n"
              "#Get the number of training/validation steps per epoch\n"
              "train_batches_per_epoch = int(np.floor(train_size / batch_size))\n"
              "for epoch in range(num_epochs):\n"
              "  sess.run(training_init_op)\n"
              "  for step in range(train_batches_per_epoch):\n"
              "    img_batch, label_batch = sess.run(next_batch)\n"
              "    _, train_loss = sess.run([train_op, loss], feed_dict={x: img_batch})\n"
              "\n"
              "# done\n"
              "print('finished')\n")
    after = before.replace("feed_dict={x: img_batch})\n", "feed_dict={x: img_batch})\nsess.close()\n")
    findings = NPU010.migrated(before, after, (3, 7))
    assert findings[0].message == INSERTED


def test_inside_a_function_after_the_last_use_passing_as_argument_is_fine() -> None:
    before = ("def main():\n"
              "    sess = tf.Session(config=config)\n"
              "    sess.run(init)\n"
              "    train(sess, steps)\n"
              "    saver.save(sess, path)\n"
              "    print('saved')\n"
              "    return 0\n")
    after = before.replace("path)\n", "path)\n    sess.close()\n")
    NPU010.migrated(before, after, (3, 11))


def test_comments_after_a_compound_statement_stay_with_what_follows() -> None:
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    for i in range(3):\n"
              "        sess.run(op)\n"
              "        # still the loop body\n"
              "\n"
              "    # report\n"
              "    print('done')\n")
    after = ("def main():\n"
             "    sess = tf.Session()\n"
             "    for i in range(3):\n"
             "        sess.run(op)\n"
             "        # still the loop body\n"
             "    sess.close()\n"
             "\n"
             "    # report\n"
             "    print('done')\n")
    NPU010.migrated(before, after, (3, 11))


def test_last_statement_of_a_nested_block_and_of_the_file() -> None:
    before = ("if __name__ == '__main__':\n"
              "    sess = tf.Session()\n"
              "    while not done:\n"
              "        done = step(sess)\n"
              "# end of file\n")
    after = ("if __name__ == '__main__':\n"
             "    sess = tf.Session()\n"
             "    while not done:\n"
             "        done = step(sess)\n"
             "    sess.close()\n"
             "# end of file\n")
    NPU010.migrated(before, after, (3, 11))


def test_tabs_and_crlf() -> None:
    before = "def main():\r\n\tsess = tf.Session()\r\n\tif x:\r\n\t\tsess.run(a)\r\n\r\nmain()\r\n"
    after = "def main():\r\n\tsess = tf.Session()\r\n\tif x:\r\n\t\tsess.run(a)\r\n\tsess.close()\r\n\r\nmain()\r\n"
    findings = assert_migrates((TF + before).replace("\n", "\r\n").replace("\r\r", "\r"),
                               (TF + after).replace("\n", "\r\n").replace("\r\r", "\r"), RULES)
    assert sites(findings) == [("NPU010", 3, 8, "migrated")]


def test_with_as_default_does_not_close() -> None:
    before = "sess = tf.Session()\nwith sess.as_default():\n    train_op.run()\nprint(1)\n"
    after = "sess = tf.Session()\nwith sess.as_default():\n    train_op.run()\nsess.close()\nprint(1)\n"
    NPU010.migrated(before, after, (2, 7))


def test_uses_outside_a_with_block_move_the_close_out_of_it() -> None:
    before = ("with tf.Graph().as_default():\n"
              "    sess = tf.Session()\n"
              "    sess.run(init)\n"
              "result = sess.run(acc)\n"
              "print(result)\n")
    after = before.replace("(acc)\n", "(acc)\nsess.close()\n")
    NPU010.migrated(before, after, (3, 11))


def test_session_per_loop_iteration_is_closed_in_the_loop() -> None:
    before = ("for fold in folds:\n"
              "    sess = tf.Session()\n"
              "    sess.run(fold)\n"
              "    evaluate(sess)\n"
              "print('all folds')\n")
    after = before.replace("evaluate(sess)\n", "evaluate(sess)\n    sess.close()\n")
    NPU010.migrated(before, after, (3, 11))


def test_unused_session_is_closed_right_away() -> None:
    NPU010.migrated("sess = tf.Session()\nx = 1\n", "sess = tf.Session()\nsess.close()\nx = 1\n", (2, 7))


@pytest.mark.parametrize("spelling, header", [
    ("tf.compat.v1.Session()", ""),
    ("Session()", "from tensorflow import Session\n"),
    ("v1.Session()", "from tensorflow.compat import v1\n"),
    ("tf.train.MonitoredTrainingSession(checkpoint_dir=d)", ""),
])
def test_spellings(spelling: str, header: str) -> None:
    before = header + f"sess = {spelling}\nsess.run(op)\n"
    after = header + f"sess = {spelling}\nsess.run(op)\nsess.close()\n"
    line = 2 + header.count("\n")
    NPU010.migrated(before, after, (line, 7))


def test_interactive_session_is_closed_at_the_end_of_its_block() -> None:
    before = ("sess = tf.InteractiveSession()\n"
              "tf.global_variables_initializer().run()\n"
              "for i in range(10):\n"
              "    train_step.run(feed_dict=feed(i))\n"
              "print(accuracy.eval())\n")
    NPU010.migrated(before, before + "sess.close()\n", (2, 7))


def test_keras_set_session_closes_at_the_end_of_the_block() -> None:
    before = ("def main():\n"
              "    sess = tf.Session(config=config)\n"
              "    K.set_session(sess)\n"
              "    model.fit(x, y)\n"
              "    model.save(path)\n"
              "\n"
              "main()\n")
    after = before.replace("(path)\n", "(path)\n    sess.close()\n")
    NPU010.migrated(before, after, (3, 11))


def test_with_npu007_the_config_goes_before_and_close_after() -> None:
    before = TF + "sess = tf.Session()\nsess.run(init)\n"
    new, findings = run_rules(before, {"NPU007", "NPU010"})
    assert new is not None and new.endswith("sess = tf.Session(config=config)\nsess.run(init)\nsess.close()\n")
    compile(new, "x.py", "exec")
    again, second = run_rules(new, {"NPU007", "NPU010"})
    assert again is None
    assert ("NPU010", 2, 7, "migrated") in sites(findings)


def test_a_line_equal_to_an_earlier_one_is_still_the_last_use() -> None:
    before = "sess = tf.Session()\nsess.run(op)\nlog()\nsess.run(op)\nprint(1)\n"
    after = before.replace("print(1)", "sess.close()\nprint(1)")
    NPU010.migrated(before, after, (2, 7))


# --- Early returns: closed before them, or reported ---------------------------------------------


def before_the_return(*lines: int) -> str:
    plural = "s" if len(lines) > 1 else ""
    return (f"inserted 'sess.close()' after the last statement using the session and before the "
            f"return{plural} on line{plural} {', '.join(map(str, lines))} "
            "(Session.close() releases the NPU graph executor)")


def test_early_return_gets_a_close_before_it() -> None:
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    if not sess.run(ready):\n"
              "        # nothing to train\n"
              "        return None\n"
              "    sess.run(train_op)\n"
              "    return 0\n")
    after = ("def main():\n"
             "    sess = tf.Session()\n"
             "    if not sess.run(ready):\n"
             "        # nothing to train\n"
             "        sess.close()\n"
             "        return None\n"
             "    sess.run(train_op)\n"
             "    sess.close()\n"
             "    return 0\n")
    findings = NPU010.migrated(before, after, (3, 11))
    assert findings[0].message == before_the_return(6)


def test_return_on_the_line_of_its_if_else_try_gets_a_block() -> None:
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    if done: return 1  # fast path\n"
              "    elif skip:   return\n"
              "    else:\n"
              "        pass\n"
              "    try: sess.run(op)\n"
              "    except Stop: return 2\n"
              "    sess.run(op)\n")
    after = ("def main():\n"
             "    sess = tf.Session()\n"
             "    if done:\n"
             "        sess.close()\n"
             "        return 1  # fast path\n"
             "    elif skip:\n"
             "        sess.close()\n"
             "        return\n"
             "    else:\n"
             "        pass\n"
             "    try: sess.run(op)\n"
             "    except Stop:\n"
             "        sess.close()\n"
             "        return 2\n"
             "    sess.run(op)\n"
             "    sess.close()\n")
    findings = NPU010.migrated(before, after, (3, 11))
    assert findings[0].message == before_the_return(4, 5, 9)


def test_one_line_return_in_a_tab_indented_crlf_method() -> None:
    before = ("class Trainer:\n"
              "\tdef run(self):\n"
              "\t\tsess = tf.Session()\n"
              "\t\tfor step in range(9):\n"
              "\t\t\tif sess.run(stop): return step\n"
              "\t\tprint('ran')\n")
    after = ("class Trainer:\n"
             "\tdef run(self):\n"
             "\t\tsess = tf.Session()\n"
             "\t\tfor step in range(9):\n"
             "\t\t\tif sess.run(stop):\n"
             "\t\t\t\tsess.close()\n"
             "\t\t\t\treturn step\n"
             "\t\tsess.close()\n"
             "\t\tprint('ran')\n")
    findings = assert_migrates((TF + before).replace("\n", "\r\n"),
                               (TF + after).replace("\n", "\r\n"), RULES)
    assert sites(findings) == [("NPU010", 4, 9, "migrated")]


def test_not_early_exits_are_left_alone() -> None:
    """A return before the creation, in a nested def, after the close; raise, break, continue."""
    before = ("def main(fresh):\n"
              "    if not fresh:\n"
              "        return None\n"
              "    sess = tf.Session()\n"
              "    def report():\n"
              "        return 'done'\n"
              "    for batch in batches:\n"
              "        if batch is None:\n"
              "            continue\n"
              "        if batch == 'end':\n"
              "            break\n"
              "        if batch == 'bad':\n"
              "            raise ValueError(batch)\n"
              "        sess.run(op, {x: batch})\n"
              "    if fresh:\n"
              "        return report()\n"
              "    return 0\n")
    after = before.replace("{x: batch})\n", "{x: batch})\n    sess.close()\n")
    findings = NPU010.migrated(before, after, (5, 11))
    assert findings[0].message == INSERTED


def test_two_sessions_closed_before_the_same_return() -> None:
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    eval_sess = tf.Session()\n"
              "    if done: return\n"
              "    sess.run(a)\n"
              "    eval_sess.run(b)\n")
    after = ("def main():\n"
             "    sess = tf.Session()\n"
             "    eval_sess = tf.Session()\n"
             "    if done:\n"
             "        sess.close()\n"
             "        eval_sess.close()\n"
             "        return\n"
             "    sess.run(a)\n"
             "    sess.close()\n"
             "    eval_sess.run(b)\n"
             "    eval_sess.close()\n")
    NPU010.migrated(before, after, (3, 11), (4, 16))


def test_default_session_is_closed_before_the_final_return() -> None:
    before = ("def main():\n"
              "    sess = tf.InteractiveSession()\n"
              "    if restored:\n"
              "        return\n"
              "    train_step.run()\n"
              "    return 0\n")
    after = ("def main():\n"
             "    sess = tf.InteractiveSession()\n"
             "    if restored:\n"
             "        sess.close()\n"
             "        return\n"
             "    train_step.run()\n"
             "    sess.close()\n"
             "    return 0\n")
    findings = NPU010.migrated(before, after, (3, 11))
    assert findings[0].message == ("inserted 'sess.close()' before the returns on lines 5, 7 "
                                   "(Session.close() releases the NPU graph executor)")


def test_returns_that_a_close_would_break_are_reported() -> None:
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    if cached:\n"
              "        return sess.run(y)\n"
              "    if quick:\n"
              "        return evaluate(sess)\n"
              "    if stop: log(); return 1\n"
              "    with sess.as_default():\n"
              "        if early: return accuracy.eval()\n"
              "    try:\n"
              "        if skip: return None\n"
              "        sess.run(op)\n"
              "    finally:\n"
              "        saver.save(sess, path)\n")
    new, findings = run_rules(TF + before, RULES)
    assert new == TF + before + "    sess.close()\n"
    assert sites(findings) == [("NPU010", 3, 11, "migrated")] + [
        ("NPU010", line, column, "unmigrated") for line, column in
        [(5, 8), (7, 8), (8, 20), (10, 18), (12, 17)]]
    reasons = ["its value uses sess; store the value in a variable first",
               "its value uses sess",
               "it follows other statements after ';' on its line",
               "its value may run sess as the default session",
               "a finally clause after it still uses sess"]
    for finding, reason in zip(sorted(findings, key=lambda f: f.line)[1:], reasons):
        assert finding.message.startswith(f"close the session before this return ({reason}"), finding


def test_a_session_made_in_an_if_is_not_closed_where_it_may_not_exist() -> None:
    before = ("def main():\n"
              "    if train:\n"
              "        sess = tf.Session()\n"
              "        sess.run(init)\n"
              "    else:\n"
              "        return evaluate()\n"
              "    if done:\n"
              "        return 1\n"
              "    sess.run(op)\n")
    new, findings = run_rules(TF + before, RULES)
    assert new == TF + before + "    sess.close()\n"
    assert sites(findings) == [("NPU010", 4, 15, "migrated"), ("NPU010", 9, 8, "unmigrated")]
    assert "sess is created inside an if/try above, so it may not exist here" in findings[-1].message


def test_default_session_whose_final_return_may_run_it_is_reported() -> None:
    NPU010.reported("def main():\n"
                    "    sess = tf.Session()\n"
                    "    K.set_session(sess)\n"
                    "    if quick:\n"
                    "        return\n"
                    "    return model.evaluate(x, y)\n", (3, 11))


def test_default_session_block_ending_in_a_bare_raise_is_reported() -> None:
    findings = NPU010.reported("def main():\n    sess = tf.InteractiveSession()\n    train()\n    raise\n",
                               (3, 11))
    assert "ends in a return/raise" in findings[0].message


# --- Already closed: migrated, no change --------------------------------------------------------


@pytest.mark.parametrize("source", [
    "sess = tf.Session()\nsess.run(op)\nsess.close()\n",
    "sess = tf.Session()\ntry:\n    sess.run(op)\nfinally:\n    sess.close()\n",
    "def f():\n    sess = tf.Session()\n    with sess:\n        sess.run(op)\n",
    "def f():\n    sess = tf.Session()\n    if done:\n        sess.close()\n    else:\n        sess.close()\n",
])
def test_already_closed(source: str) -> None:
    findings = assert_unchanged(TF + source, RULES)
    assert [s[0::3] for s in sites(findings)] == [("NPU010", "migrated")]


def test_with_statement_sessions_are_not_sites() -> None:
    assert assert_unchanged(TF + "with tf.Session(config=c) as sess:\n    sess.run(op)\n"
                            "with tf.Session():\n    pass\n", RULES) == []


@pytest.mark.parametrize("header, closing", [
    ("from contextlib import closing\n", "closing"),
    ("from contextlib import closing as closed\n", "closed"),
    ("import contextlib\n", "contextlib.closing"),
    ("import contextlib as cl\n", "cl.closing"),
])
def test_contextlib_closing_closes_the_session(header: str, closing: str) -> None:
    created = (f"with {closing}(tf.Session(config=c)) as sess:\n    sess.run(op)\n"
               f"with {closing}((tf.Session())), open(p) as f:\n    pass\n")
    assert assert_unchanged(TF + header + created, RULES) == []
    bound = "def f():\n    sess = tf.Session()\n    with " + closing + "(sess):\n        sess.run(op)\n"
    findings = assert_unchanged(TF + header + bound, RULES)
    assert [(f.status, f.message) for f in findings] == [
        ("migrated", "sess is closed (the NPU graph executor is released)")]


ENTERED_ATTRIBUTE = """\
class Model(object):
    def train(self, steps):
        self.session = tf.Session()
        init = tf.global_variables_initializer()
        with self.session as sess, open("log.txt") as log:
            sess.run(init)
            for _ in range(steps):
                self.session.run(self.step)
"""


def test_a_session_attribute_entered_with_with_is_closed_by_it() -> None:
    """``with self.session as sess:`` closes the session as ``with session as sess:`` does."""
    NPU010.reported(ENTERED_ATTRIBUTE, (4, 23), status="migrated", message=(
        "self.session is closed by the 'with' that enters it (line 6; the NPU graph executor is released)"))


@pytest.mark.parametrize("later", [
    "    def evaluate(self, op):\n        return self.session.run(op)\n",  # another method, after it
    "    def reset(self):\n        self.session = tf.Session()\n",  # a second session on it
])
def test_a_session_attribute_used_outside_its_with_is_reported(later: str) -> None:
    findings = NPU010.reported(ENTERED_ATTRIBUTE + later, (4, 23), *([(11, 23)] if "reset" in later else []))
    assert "stored in an attribute" in findings[0].message


def test_a_session_attribute_used_after_its_with_in_the_same_method_is_reported() -> None:
    after = ENTERED_ATTRIBUTE + "        return self.session.run(self.loss)\n"
    NPU010.reported(after, (4, 23))


def test_a_supervisors_prepared_session_is_closed_after_the_supervisor_stops() -> None:
    """``sv.stop()`` does not close what ``prepare_or_wait_for_session`` made, and the
    Supervisor's services run that session until then: the close goes after ``sv.stop()``."""
    before = ("def train(steps):\n"
              "    sv = tf.train.Supervisor(logdir=\"/tmp/sv\")\n"
              "    sess = sv.prepare_or_wait_for_session(\"\", config=config)\n"
              "    for _ in range(steps):\n"
              "        sess.run(step)\n"
              "    sv.stop()\n"
              "    print(\"done\")\n")
    after = before.replace("    sv.stop()\n", "    sv.stop()\n    sess.close()\n")
    NPU010.migrated(before, after, (4, 11))


def test_a_prepared_session_of_a_supervisor_not_named_here_is_reported() -> None:
    source = ("class Trainer(object):\n"
              "    def train(self):\n"
              "        sess = self.sv.prepare_or_wait_for_session(self.target)\n"
              "        sess.run(step)\n"
              "        self.sv.stop()\n")
    (finding,) = NPU010.reported(source, (4, 15))
    assert finding.message.startswith(
        f"{CLOSE} (the session self.sv.prepare_or_wait_for_session() makes; close it after "
        "self.sv.stop(): its services use it until then)"), finding.message


def test_a_prepared_session_entered_with_with_is_not_a_site() -> None:
    source = "with sv.prepare_or_wait_for_session(\"\") as sess:\n    sess.run(step)\n"
    assert assert_unchanged(TF + source, RULES) == []


def test_a_session_managers_session_is_closed_after_its_last_use() -> None:
    """Review round 26: a ``tf.train.SessionManager`` returns a bare session (NPU007 now
    configures it); a ``with`` closes it, else the close goes after its last use."""
    before = ("def train(steps, init_op):\n"
              "    manager = tf.train.SessionManager()\n"
              "    sess = manager.prepare_session(\"\", init_op=init_op, config=config)\n"
              "    for _ in range(steps):\n"
              "        sess.run(step)\n"
              "    print(\"done\")\n"
              "\n"
              "\n"
              "def evaluate(manager):\n"
              "    with manager.wait_for_session(\"\", config) as sess:\n"
              "        sess.run(step)\n")
    after = before.replace("        sess.run(step)\n    print", "        sess.run(step)\n    sess.close()\n    print")
    NPU010.migrated(before, after, (4, 11))
    unnamed = before.replace("tf.train.SessionManager()", "make_manager()")
    assert assert_unchanged(TF + unnamed, RULES) == []  # a file not naming SessionManager


def test_a_closing_that_is_not_contextlibs_is_not_trusted() -> None:
    NPU010.reported("from mylib import closing\nwith closing(tf.Session()) as sess:\n    sess.run(op)\n",
                    (3, 13))


# --- Reported: unmigrated at the creation site --------------------------------------------------


@pytest.mark.parametrize("source, line, column, why", [
    ("class Agent(object):\n    def __init__(self):\n        self.sess = tf.Session()\n", 4, 20,
     "stored in an attribute"),
    ("K.set_session(tf.Session(config=config))\n", 2, 14, "created inline as an argument"),
    ("def make():\n    return tf.Session()\n", 3, 11, "the session is returned by make()"),
    ("sessions[0] = tf.Session()\n", 2, 14, "stored in an attribute, subscript"),
    ("a = b = tf.Session()\n", 2, 8, "several names"),
    ("tf.Session().run(op)\n", 2, 0, "used inline"),
    ("with tf.Session().as_default():\n    op.run()\n", 2, 5, "used inline"),
    ("def f():\n    sess = tf.Session()\n    return sess\n", 3, 11, "sess is returned"),
    ("def f():\n    sess = tf.Session()\n    yield sess\n", 3, 11, "sess is yielded"),
    ("def f():\n    sess = tf.Session()\n    self.sess = sess\n", 3, 11, "stored on an attribute (self.sess)"),
    ("def f():\n    sess = tf.Session()\n    other = sess\n", 3, 11, "assigned to another name"),
    ("def f():\n    sess = tf.Session()\n    sessions.append([sess])\n", 3, 11, "stored in a container"),
    ("sess = tf.Session()\ndef step():\n    return sess.run(op)\nstep()\n", 2, 7,
     "used in a nested function"),
    ("def f():\n    global sess\n    sess = tf.Session()\n", 4, 11,
     "is declared 'global sess' in f(): it escapes through the module global"),
    ("global sess\nsess = tf.Session()\nsess.run(op)\n", 3, 7,  # a no-op there: no function (N1)
     "is declared 'global sess' at module level: it is a module global, which the module's functions"),
    ("def f():\n    sess = None\n    def g():\n        nonlocal sess\n        sess = tf.Session()\n", 6, 15,
     "is declared 'nonlocal sess' in g(): it belongs to the enclosing function"),
    ("sess = tf.Session()\nsess = tf_debug.LocalCLIDebugWrapperSession(sess)\nsess.run(a)\n", 2, 7,
     "assigned again"),
    ("def f():\n    sess = tf.Session()\n    return sess.run(op)\n", 3, 11,
     "return/raise/break/continue statement (line 4); store what it computes in a variable and "
     "close the session before that line"),
    ("sess = tf.Session()\nstep = sess.make_callable(train_op)\nstep()\n", 2, 7, "make_callable()"),
    ("sess = tf.Session()\nrun = sess.run\nrun(op)\n", 2, 7, "bound method run"),
    ("if fresh: sess = tf.Session()\n", 2, 17, "one-line block"),
    ("for i in range(2):\n    sess = tf.Session()\nsess.run(op)\n", 3, 11, "used outside the block"),
    ("class Model:\n    sess = tf.Session()\n", 3, 11, "class attribute"),
])
def test_not_closable_automatically(source: str, line: int, column: int, why: str) -> None:
    findings = assert_unchanged(TF + source, RULES)
    unmigrated = [f for f in findings if f.status == "unmigrated"]
    assert [(f.line, f.column) for f in unmigrated] == [(line, column)], findings
    assert unmigrated[0].message.startswith(CLOSE) and why in unmigrated[0].message, unmigrated[0].message


def test_global_session_made_in_a_function_is_closed_at_the_end_of_main() -> None:
    """``global sess; sess = tf.Session()`` in a loader: other functions use the module's
    session, so the reason is the escape through the global (not a second binding), and the
    close belongs at the end of the ``__main__`` block."""
    source = TF + """\
sess = None


def load():
    global sess
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())


def predict(op):
    return sess.run(op)


if __name__ == '__main__':
    load()
    print(predict(v))
"""
    findings = assert_unchanged(source, RULES)
    assert [(f.line, f.column, f.status) for f in findings] == [(7, 11, "unmigrated")]
    message = findings[0].message
    assert message.startswith(f"{CLOSE} (sess is declared 'global sess' in load(): it escapes "
                              "through the module global, which code outside that function may "
                              "still use; close it at the end of the "
                              "'if __name__ == \"__main__\":' block (line 17))"), message
    assert "declared again" not in message


CLOSED_BY_A_METHOD = """\
class Model(object):
    def build(self):
        self.sess = tf.Session()

    def close_session(self):
        self.sess.close()
"""


def test_a_session_closed_by_a_method_nobody_calls_is_reported() -> None:
    findings = assert_unchanged(TF + CLOSED_BY_A_METHOD, RULES)
    assert [(f.line, f.column, f.status) for f in findings] == [(4, 20, "unmigrated")]
    assert findings[0].message.startswith(
        f"{CLOSE} (self.sess is closed in Model.close_session(), but no file of the repository "
        "that imports TensorFlow calls close_session(): call it when training ends)")


@pytest.mark.parametrize("source, facts", [
    (CLOSED_BY_A_METHOD, {"npu010-method-called:close_session"}),  # another file calls it
    (CLOSED_BY_A_METHOD + "\nmodel = Model()\nmodel.build()\nmodel.close_session()\n", set()),
    (CLOSED_BY_A_METHOD.replace("close_session", "__del__"), set()),  # Python calls it
])
def test_a_session_closed_by_a_called_method_is_closed(source: str, facts: set) -> None:
    findings = assert_unchanged(TF + source, RULES, facts)
    assert [(f.line, f.column, f.status) for f in findings] == [(4, 20, "migrated")]


CLOSED_BY_THE_FRAMEWORK = [
    # bilm-tf's tests/test_model.py: unittest runs tearDown() after every test
    ("class TestBidirectionalLanguageModel(unittest.TestCase):\n    def setUp(self):\n"
     "        self.sess = tf.Session()\n\n    def tearDown(self):\n        tf.reset_default_graph()\n"
     "        self.sess.close()\n", "TestBidirectionalLanguageModel.tearDown()"),
    ("class ModelTest(tf.test.TestCase):\n    def setUp(self):\n        self.sess = tf.Session()\n\n"
     "    def tearDown(self):\n        self.sess.close()\n", "ModelTest.tearDown()"),
    # a MonitoredSession calls end() of every hook when training stops
    ("class EvalHook(tf.train.SessionRunHook):\n    def begin(self):\n        self.sess = tf.Session()\n\n"
     "    def end(self, session):\n        self.sess.close()\n", "EvalHook.end()"),
]


@pytest.mark.parametrize("source, closer", CLOSED_BY_THE_FRAMEWORK)
def test_a_session_closed_by_a_method_the_framework_calls_is_closed(source: str, closer: str) -> None:
    findings = assert_unchanged(TF + source, RULES)
    assert [(f.line, f.column, f.status) for f in findings] == [(4, 20, "migrated")]
    assert findings[0].message == f"self.sess is closed in {closer} (the NPU graph executor is released)"


def test_a_method_named_like_a_frameworks_in_another_class_is_not_called() -> None:
    source = CLOSED_BY_A_METHOD.replace("close_session", "tearDown")
    findings = assert_unchanged(TF + source, RULES)
    assert [(f.line, f.column, f.status) for f in findings] == [(4, 20, "unmigrated")]


def test_two_sessions_under_one_name_are_both_reported() -> None:
    NPU010.reported("sess = tf.Session()\nsess.run(a)\nsess = tf.Session()\nsess.run(b)\n", (2, 7),
                    (4, 7))


def test_shadowing_parameter_in_a_function_is_another_variable() -> None:
    before = "sess = tf.Session()\ndef train(sess):\n    sess.run(op)\ntrain(sess)\n"
    after = before + "sess.close()\n"
    NPU010.migrated(before, after, (2, 7))


def test_not_a_tf_session() -> None:
    assert assert_unchanged(TF + "import requests\ns = requests.Session()\ns.get(u)\n", RULES) == []


# --- Endless loops ----------------------------------------------------------------------------

SERVE = '''
def serve(requests, replies, outputs):
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    while True:
        replies.put(sess.run(outputs, {"inputs:0": requests.get()}))
'''


@pytest.mark.parametrize("source", [
    SERVE,
    SERVE.replace("while True:", "while 1:"),
    # a generator of batches: the loop ends only when its consumer stops asking
    SERVE.replace("replies.put(sess.run(outputs, {\"inputs:0\": requests.get()}))", "yield sess.run(outputs)"),
    # the loop ends the ``with`` block that holds the session's uses
    SERVE.replace("    while True:\n        replies", "    with tf.device('/cpu:0'):\n        while True:\n"
                  "            replies"),
    # only a return leaves it (a break of an inner loop is not its own): a close before the
    # return would be a close under an ``if`` to a second run
    SERVE.replace("        replies.put", "        for _ in range(3):\n            break\n"
                  "        if requests.empty():\n            return\n        replies.put"),
])
def test_a_session_used_up_to_an_endless_loop_is_reported(source: str) -> None:
    """No statement after ``while True:`` with no ``break`` of its own ever runs: a close()
    there was dead code, reported ``migrated`` for a session that is never closed."""
    findings = NPU010.reported(source, (4, 11))
    loop = (TF + source).splitlines().index(next(line for line in source.splitlines() if "while" in line)) + 1
    assert findings[0].message.startswith(f"{CLOSE} (sess is used up to an endless loop (line {loop}: ")


def test_a_session_used_up_to_a_loop_with_a_break_is_closed_after_it() -> None:
    before = SERVE.replace("        replies.put", "        if requests.empty():\n            break\n"
                           "        replies.put")
    after = before + "    sess.close()\n"
    NPU010.migrated(before, after, (4, 11))
