"""Training configs and pipeline files are read as every file of the package is: bounded
(``spades_env.core.files``): a YAML alias bomb, a FIFO or a huge integer is a ConfigError
naming the file, read without end never."""

from __future__ import annotations

import os

import pytest

from training.config import ConfigError
from training.pipeline import load_pipeline
from training.ppo import load_train_config

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8)
)


@pytest.mark.parametrize("load", [load_train_config, load_pipeline], ids=["train", "pipeline"])
def test_alias_bomb_fifo_and_huge_integers_are_refused(tmp_path, load):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert len(BOMB) < 700
    with pytest.raises(ConfigError, match="bomb.yaml") as err:
        load(bomb)
    assert len(str(err.value)) < 1000  # the message never formats the expanded value
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="fifo.yaml"):
        load(fifo)  # refused before reading: no writer, so a read would block for ever
    huge = tmp_path / "huge.yaml"
    huge.write_text("seed: " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError, match="huge.yaml") as err:
        load(huge)
    assert len(str(err.value)) < 1000


def test_an_override_with_a_huge_integer_is_refused():
    with pytest.raises(ConfigError, match="override"):
        load_train_config(None, ["seed=" + "9" * 5000])
