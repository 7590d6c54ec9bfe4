"""A helper module in transformers' style: `warning_once` remembers, in a module
global, the messages it has logged."""

import logging

logger = logging.getLogger("tests.models.warn_once")
_warned: set[str] = set()


def warning_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        logger.warning(message)
