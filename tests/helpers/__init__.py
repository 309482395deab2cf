"""Helpers shared by the test folders (``tests/`` is on the path through pytest's ``pythonpath``)."""
