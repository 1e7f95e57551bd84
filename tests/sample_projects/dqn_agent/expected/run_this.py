"""Train the DQN agent on a toy environment."""
import tensorflow as tf

from agent import DeepQNetwork


def run(env, episodes=300):
    RL = DeepQNetwork(env.n_actions, env.n_features)
    step = 0
    for episode in range(episodes):
        observation = env.reset()
        while True:
            action = RL.choose_action(observation)
            observation, reward, done = env.step(action)
            if step > 200 and step % 5 == 0:
                RL.learn()
            if done:
                break
            step += 1
    writer = tf.summary.FileWriter("logs/", RL.sess.graph)
    writer.close()
