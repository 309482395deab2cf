"""PyTorch training for spades_env: self-play PPO (:mod:`training.ppo`), the network
(:mod:`training.network`), safetensors checkpoints (:mod:`training.checkpoint`), checkpoints
as Policies (:mod:`training.policy_adapter`), configs (:mod:`training.config`) and the
Stable-Baselines3 path (:mod:`training.sb3_train`). The only torch code of the project."""
