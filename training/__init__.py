"""PyTorch training for spades_env: self-play PPO (:mod:`training.ppo`), the network
(:mod:`training.network`), safetensors checkpoints (:mod:`training.checkpoint`; a checkpoint
plays as a Policy through ``spades_env.policies.load``, NumPy only), configs
(:mod:`training.config`) and the Stable-Baselines3 path (:mod:`training.sb3_train`). The only
torch code of the project."""
