"""NPU010 and holders: a session lives as long as the objects built with it (issue 13, defect 1).

``actor = Actor(sess, ...)`` keeps ``sess`` in ``self.sess``: closing after the last *direct* use
of ``sess`` made the first ``actor.choose_action(s)`` of the training loop fail with
``RuntimeError: Attempted to use a closed Session.``
"""

from __future__ import annotations

from support.rules import assert_migrates, run_rules, sites
from support.session_close import close_reported

RULES = {"NPU010"}


def inserted(holders: str) -> str:
    return (f"inserted 'sess.close()' after the last statement using the session or what is "
            f"built with it ({holders}) (Session.close() releases the NPU graph executor)")


ACTOR_CRITIC = '''"""Actor-critic on CartPole (one session shared by the two networks)."""
import gym
import numpy as np
import tensorflow as tf

np.random.seed(2)
tf.set_random_seed(2)
MAX_EPISODE = 3000
RENDER = False


class Actor(object):
    def __init__(self, sess, n_features, n_actions, lr=0.001):
        self.sess = sess
        self.s = tf.placeholder(tf.float32, [1, n_features], "state")
        self.a = tf.placeholder(tf.int32, None, "act")
        self.td_error = tf.placeholder(tf.float32, None, "td_error")
        l1 = tf.layers.dense(self.s, 20, tf.nn.relu)
        self.acts_prob = tf.layers.dense(l1, n_actions, tf.nn.softmax)
        log_prob = tf.log(self.acts_prob[0, self.a])
        self.exp_v = tf.reduce_mean(log_prob * self.td_error)
        self.train_op = tf.train.AdamOptimizer(lr).minimize(-self.exp_v)

    def learn(self, s, a, td):
        feed_dict = {self.s: s[np.newaxis, :], self.a: a, self.td_error: td}
        _, exp_v = self.sess.run([self.train_op, self.exp_v], feed_dict)
        return exp_v

    def choose_action(self, s):
        probs = self.sess.run(self.acts_prob, {self.s: s[np.newaxis, :]})
        return np.random.choice(np.arange(probs.shape[1]), p=probs.ravel())


class Critic(object):
    def __init__(self, sess, n_features, lr=0.01):
        self.sess = sess
        self.s = tf.placeholder(tf.float32, [1, n_features], "state")
        self.v_ = tf.placeholder(tf.float32, [1, 1], "v_next")
        self.r = tf.placeholder(tf.float32, None, "r")
        self.v = tf.layers.dense(self.s, 1)
        self.td_error = self.r + 0.9 * self.v_ - self.v
        self.train_op = tf.train.AdamOptimizer(lr).minimize(tf.square(self.td_error))

    def learn(self, s, r, s_):
        s, s_ = s[np.newaxis, :], s_[np.newaxis, :]
        v_ = self.sess.run(self.v, {self.s: s_})
        td_error, _ = self.sess.run([self.td_error, self.train_op],
                                    {self.s: s, self.v_: v_, self.r: r})
        return td_error


def evaluate(sess, episodes):
    """A plain function of this file: its result does not keep the session."""
    total = 0.0
    for _ in range(episodes):
        total += sess.run(reward_op)
    return total / episodes


env = gym.make('CartPole-v0')
env.seed(1)
N_F = env.observation_space.shape[0]
N_A = env.action_space.n

sess = tf.Session()
actor = Actor(sess, n_features=N_F, n_actions=N_A, lr=0.001)
critic = Critic(sess, n_features=N_F, lr=0.01)
sess.run(tf.global_variables_initializer())
baseline = evaluate(sess, 3)
history = [baseline]

for i_episode in range(MAX_EPISODE):
    s = env.reset()
    track_r = []
    while True:
        if RENDER:
            env.render()
        a = actor.choose_action(s)
        s_, r, done, info = env.step(a)
        if done:
            r = -20
        track_r.append(r)
        td_error = critic.learn(s, r, s_)
        actor.learn(s, a, td_error)
        s = s_
        if done:
            ep_rs_sum = sum(track_r)
            history.append(ep_rs_sum)
            print("episode:", i_episode, "  reward:", int(ep_rs_sum))
            break

# plot the learning curve
print(np.mean(history))
'''


def test_actor_critic_script_is_closed_after_the_training_loop() -> None:
    """Not after ``sess.run(init)``, the last direct use: the loop trains through the holders.
    ``baseline`` comes from a function of this file that does not keep its parameter, so
    ``history = [baseline]`` is not a holder stored in a container."""
    after = ACTOR_CRITIC.replace("            break\n\n# plot", "            break\nsess.close()\n\n# plot")
    findings = assert_migrates(ACTOR_CRITIC, after, RULES)
    assert sites(findings) == [("NPU010", 65, 7, "migrated")]
    assert findings[0].message == inserted("actor, critic")


DQN_TRAINER = '''import tensorflow as tf
from rl.agents import make_agent
from rl.envs import make_env


def train(flags):
    env = make_env(flags.env)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    agent = None
    for episode in range(flags.episodes):
        if episode % flags.rebuild_every == 0:
            agent = make_agent(sess=sess, n_actions=env.action_space.n)
        state, done = env.reset(), False
        while not done:
            if agent is not None:
                action = agent.act(state)
                state, reward, done, _ = env.step(action)
                agent.observe(reward, done)
    print("trained %d episodes" % flags.episodes)
    write_summary(flags.logdir)
'''


def test_holder_made_and_used_only_inside_ifs_in_a_loop() -> None:
    """``agent = None`` before the session is another object; the uses in the loop are uses of
    the loop statement, so the close goes after the loop."""
    after = DQN_TRAINER.replace("agent.observe(reward, done)\n",
                                "agent.observe(reward, done)\n    sess.close()\n")
    findings = assert_migrates(DQN_TRAINER, after, RULES)
    assert sites(findings) == [("NPU010", 8, 11, "migrated")]
    assert findings[0].message == inserted("agent")


def test_holders_of_holders_keep_the_session_open() -> None:
    before = ("def main():\n"
              "    sess = tf.Session(config=config)\n"
              "    model = build_model(sess, hparams)\n"
              "    trainer = Trainer(model, optimizer='adam')\n"
              "    sess.run(tf.global_variables_initializer())\n"
              "    for epoch in range(10):\n"
              "        trainer.fit_epoch(data)\n"
              "    print('done')\n")
    after = before.replace("fit_epoch(data)\n", "fit_epoch(data)\n    sess.close()\n")
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert findings[0].message == inserted("model, trainer")


def test_a_bound_method_handed_to_a_kept_call_holds_its_object() -> None:
    before = ("def main():\n"
              "    sess = tf.Session()\n"
              "    agent = Agent(sess)\n"
              "    hook = StepHook(agent.step)\n"
              "    sess.run(init)\n"
              "    loop.run(hooks=[hook])\n"
              "    print('done')\n")
    after = before.replace("hooks=[hook])\n", "hooks=[hook])\n    sess.close()\n")
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert findings[0].message == inserted("agent, hook")


def test_results_that_do_not_keep_the_session_are_not_holders() -> None:
    """TF functions returning plain values, Saver.save, builtins, and a function of this file
    that only runs its parameter: returning their results does not keep the session."""
    before = ("saver = tf.train.Saver()\n"
              "\n"
              "def accuracy(session, images):\n"
              "    return session.run(acc, {x: images})\n"
              "\n"
              "def main():\n"
              "    sess = tf.Session()\n"
              "    sess.run(init)\n"
              "    step = tf.train.global_step(sess, global_step)\n"
              "    path = saver.save(sess, 'model.ckpt', global_step=step)\n"
              "    size = len(sess.list_devices())\n"
              "    scores = [accuracy(sess, batch) for batch in batches]\n"
              "    return path, scores, size\n")
    after = before.replace("for batch in batches]\n", "for batch in batches]\n    sess.close()\n")
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert sites(findings) == [("NPU010", 8, 11, "migrated")]


def test_holder_appended_to_a_list_escapes() -> None:
    close_reported("def build_population(n):\n"
                   "    sess = tf.Session()\n"
                   "    population = []\n"
                   "    for i in range(n):\n"
                   "        agent = make_agent(sess=sess, seed=i)\n"
                   "        population.append(agent)\n"
                   "    sess.run(tf.global_variables_initializer())\n"
                   "    evolve(population)\n",
                   (3, 11, "agent (built with sess) is stored in a container (population.append)"))


def test_holder_stored_returned_from_a_call_or_in_a_display_escapes() -> None:
    close_reported("class Runner(object):\n"
                   "    def setup(self):\n"
                   "        sess = tf.Session()\n"
                   "        self.agent = Agent(sess)\n"
                   "        sess.run(init)\n",
                   (4, 15, "sess is passed to Agent(), whose result is stored on an attribute "
                     "(self.agent)"))
    close_reported("def main():\n"
                   "    sess = tf.Session()\n"
                   "    actors = [Actor(sess, i) for i in range(4)]\n"
                   "    sess.run(init)\n",
                   (3, 11, "sess is passed to Actor(), whose result is stored in a container (actors)"))


def test_holder_used_in_a_nested_function_escapes() -> None:
    close_reported("def main():\n"
                   "    sess = tf.Session()\n"
                   "    agent = Agent(sess)\n"
                   "    def on_step(obs):\n"
                   "        return agent.act(obs)\n"
                   "    env.run(on_step)\n",
                   (3, 11, "agent (built with sess) is used in a nested function"))


def test_holder_last_used_in_a_return_is_reported_with_its_name() -> None:
    close_reported("def make_trained_agent():\n"
                   "    sess = tf.Session()\n"
                   "    agent = Agent(sess)\n"
                   "    agent.train()\n"
                   "    return agent\n",
                   (3, 11, "sess is last used through agent (built with it) in a "
                     "return/raise/break/continue statement (line 6); it leaves with them: close "
                     "it where the caller is done with them"))


def test_early_return_of_a_holder_is_not_closed_before() -> None:
    before = ("def main(dry_run):\n"
              "    sess = tf.Session()\n"
              "    agent = Agent(sess)\n"
              "    if dry_run:\n"
              "        return agent\n"
              "    agent.train()\n"
              "    print('trained')\n")
    after = before.replace("agent.train()\n", "agent.train()\n    sess.close()\n")
    new, findings = run_rules("import tensorflow as tf\n" + before, RULES)
    assert new == "import tensorflow as tf\n" + after
    assert run_rules(new, RULES)[0] is None  # (the second run does not report the return again)
    assert sites(findings) == [("NPU010", 3, 11, "migrated"), ("NPU010", 6, 8, "unmigrated")]
    assert findings[1].message.startswith("close the session before this return (its value uses "
                                          "agent, which holds sess; store the value")


def test_holder_of_the_previous_iteration_used_before_the_new_session() -> None:
    """Closing at the end of each iteration would leave ``agent`` of the previous iteration
    with a closed session when the next one reports."""
    close_reported("agent = None\n"
                   "for fold in range(5):\n"
                   "    if agent is not None:\n"
                   "        agent.report()\n"
                   "    sess = tf.Session()\n"
                   "    agent = Agent(sess)\n"
                   "    agent.train(fold)\n",
                   (6, 11, "agent (built with sess) is used on line 4 before it gets sess in the loop "
                     "that makes it, so it may still hold the one of the previous iteration"))


def test_a_function_of_the_file_that_keeps_its_parameter_makes_a_holder() -> None:
    """``make_agent`` returns an ``Agent`` built with the session: its result is a holder."""
    before = ("class Agent(object):\n"
              "    def __init__(self, sess):\n"
              "        self.sess = sess\n"
              "\n"
              "def make_agent(sess):\n"
              "    return Agent(sess)\n"
              "\n"
              "def log_devices(sess):\n"
              "    print(sess.list_devices())\n"
              "    return None\n"
              "\n"
              "def main():\n"
              "    sess = tf.Session()\n"
              "    agent = make_agent(sess)\n"
              "    status = log_devices(sess)\n"
              "    sess.run(init)\n"
              "    agent.train()\n"
              "    return status\n")
    after = before.replace("    agent.train()\n", "    agent.train()\n    sess.close()\n")
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert findings[0].message == inserted("agent")


def test_a_function_of_the_file_that_stores_its_parameter_elsewhere() -> None:
    """Its result is dropped, but it put the session in a global or on another object: the
    session escapes (a close after the last use of ``sess`` would break ``run_all()``)."""
    close_reported("SESS = None\n"
                   "\n"
                   "def init_globals(sess):\n"
                   "    global SESS\n"
                   "    SESS = sess\n"
                   "\n"
                   "def attach(model, sess):\n"
                   "    model.sess = sess\n"
                   "\n"
                   "def main():\n"
                   "    sess = tf.Session()\n"
                   "    init_globals(sess)\n"
                   "    run_all()\n"
                   "\n"
                   "def fit():\n"
                   "    sess = tf.Session()\n"
                   "    model = Model()\n"
                   "    attach(model, sess)\n"
                   "    model.fit()\n",
                   (12, 11, "sess is kept by init_globals(), where SESS (built with sess) is declared "
                      "global/nonlocal"),
                   (17, 11, "sess is kept by attach(), where sess is stored on an attribute (model.sess)"))


def test_a_constructor_of_the_file_that_does_not_keep_the_session() -> None:
    before = ("class DeviceReport(object):\n"
              "    def __init__(self, sess):\n"
              "        self.devices = sess.list_devices()\n"
              "\n"
              "def main():\n"
              "    sess = tf.Session()\n"
              "    report = DeviceReport(sess)\n"
              "    sess.run(train_op)\n"
              "    print(report.devices)\n")
    after = before.replace("    sess.run(train_op)\n", "    sess.run(train_op)\n    sess.close()\n")
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert findings[0].message == ("inserted 'sess.close()' after the last statement using the "
                                   "session (Session.close() releases the NPU graph executor)")


def test_the_name_index_finds_what_uses_finds() -> None:
    """``Names`` (one walk for every holder of a scope) answers like ``uses`` (one walk per
    name): shadowing parameters and locals, def names, globals, lambdas, comprehensions."""
    from fissix import pygram, pytree
    from fissix.pgen2 import driver

    from npu_codemod.codemods.scopes import Names, uses

    source = ("agent = Agent(sess)\n"
              "def agent_step(agent, n=agent):\n"
              "    return agent.act(n)\n"
              "def report():\n"
              "    global agent\n"
              "    print(agent, [agent for agent in pool], lambda agent: agent, lambda: agent)\n"
              "    def agent():\n"
              "        pass\n"
              "class Box:\n"
              "    agent = agent\n"
              "    def get(self):\n"
              "        return agent\n"
              "agent.train(agent=agent)\n")
    tree = driver.Driver(pygram.python_grammar_no_print_statement, convert=pytree.convert).parse_string(source)
    names = Names(tree)
    for scope in [tree, *(node for node in tree.pre_order() if node.type >= 256 and
                          pytree.type_repr(node.type) in ("funcdef", "classdef"))]:
        index = names if scope is tree else Names(scope)
        for name in ("agent", "n", "pool", "self"):
            assert [(u.leaf.lineno, u.leaf.column, u.kind, u.detail) for u in index.uses(name)] == \
                [(u.leaf.lineno, u.leaf.column, u.kind, u.detail) for u in uses(scope, name)], (scope, name)
    assert len(names.uses("agent")) > 8


def test_setattr_stores_the_session() -> None:
    close_reported("def main():\n"
                   "    sess = tf.Session()\n"
                   "    setattr(model, 'sess', sess)\n"
                   "    model.fit(x, y)\n",
                   (3, 11, "sess is kept by setattr(), where setattr() stores it on an object"))


def test_tensors_combined_by_a_tf_op_are_no_container() -> None:
    """Review round 17, N4: ``tf.add(l1, l2)`` is a TF op, not ``some_set.add(l1)``: its result
    is a tensor built with the session (a holder), and the session returned by a helper is
    closed after the last use, as a local ``tf.Session()`` is."""
    before = ("import tensorflow as tf\n"
              "import model\n"
              "\n"
              "\n"
              "def setup():\n"
              "    sess = tf.Session()\n"
              "    return sess\n"
              "\n"
              "\n"
              "def train():\n"
              "    sess = setup()\n"
              "    [a, b] = model.create(sess, tf.constant(1.0))\n"
              "    l1, l2 = model.losses(a, b)\n"
              "    total = tf.add(l1, l2, name='total')\n"
              "    print(sess.run(total))\n")
    after = before + "    sess.close()\n"
    findings = assert_migrates(before, after, RULES)
    assert sites(findings) == [("NPU010", 11, 11, "migrated")]
    assert findings[0].message == inserted("a, b, l1, l2, total")


def test_a_storing_method_of_a_local_still_stores() -> None:
    close_reported("def main():\n"
                   "    sess = tf.Session()\n"
                   "    tensors = set()\n"
                   "    out = model.build(sess)\n"
                   "    tensors.add(out)\n"
                   "    sess.run(out)\n"
                   "    report(tensors)\n",
                   (3, 11, "out (built with sess) is stored in a container (tensors.add)"))
