"""The environment front-ends, all over the one rules core: the PettingZoo AEC and parallel
envs (:mod:`spades_env.envs.aec`), the Gymnasium single-agent env ``Spades-v0`` with seated
opponents (:mod:`spades_env.envs.gym_env`), and the batched engine with its training adapters
(:mod:`spades_env.envs.vector`, :mod:`spades_env.envs.vector_adapters`)."""
