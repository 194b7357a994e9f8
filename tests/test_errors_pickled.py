"""Every expected error survives the trip from a worker to the main process (#44): a worker's
exception is pickled, and one that cannot be made again breaks the pool instead of saying its
line. The fault this pins: SaveFailed and DeliveryNotRecorded took more than the message in
``__init__``, so Exception's pickling (which calls ``__init__`` with ``args``) raised TypeError."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import notifier
import notifier.errors as errors
from notifier.database import DatabaseURL
from notifier.errors import ExitCode, NotifierError, StateError
from notifier.store.durable import DeliveryNotRecorded, SaveFailed


def _every_error_class() -> list[type[NotifierError]]:
    import importlib
    import pkgutil

    for module in pkgutil.walk_packages(notifier.__path__, "notifier."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found, todo = [], [NotifierError]
    while todo:
        kind = todo.pop()
        found.append(kind)
        todo.extend(kind.__subclasses__())
    return found


@pytest.mark.parametrize(
    "error",
    [
        SaveFailed(Path("/srv/state.json"), "No space left on device"),
        SaveFailed(DatabaseURL("postgresql://u@db/notify", site="a"), "connection lost"),
        DeliveryNotRecorded(Path("/srv/state.json"), "https://api.indexnow.org/indexnow", 3, "disk full"),
        StateError("/srv/state.json: not JSON"),
    ],
    ids=["save-file", "save-database", "delivery", "plain"],
)
def test_an_error_is_made_again_whole(error: NotifierError) -> None:
    """(edit: ``__reduce__`` left out, or ``vars(error).update`` left out)"""
    error.add_note("while reading part 3")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error) and again.args == error.args
    assert vars(again) == vars(error) and again.exit_code == error.exit_code
    assert again.__notes__ == ["while reading part 3"]


def test_save_failed_keeps_its_fields() -> None:
    again = pickle.loads(pickle.dumps(SaveFailed(Path("/srv/state.json"), "read-only file system")))
    assert again.path == Path("/srv/state.json") and again.reason == "read-only file system"


def test_delivery_not_recorded_keeps_its_exit_code() -> None:
    again = pickle.loads(pickle.dumps(DeliveryNotRecorded(Path("/s.json"), "e", 1, "r")))
    assert again.exit_code is ExitCode.NOT_RECORDED and "a batch of 1 URL," in str(again)


def test_every_error_class_of_the_package_pickles() -> None:
    """Each class in the tree, made with the arguments its ``__init__`` takes (a class added later
    with its own ``__init__`` is covered too: it is found by walking the subclasses)."""
    import inspect

    kinds = _every_error_class()
    assert {SaveFailed, DeliveryNotRecorded, errors.LockTimeout} <= set(kinds)
    for kind in kinds:
        wanted = [p for p in inspect.signature(kind.__init__).parameters.values() if p.name != "self" and p.default is p.empty]
        if any(p.kind is p.VAR_POSITIONAL for p in wanted):
            error = kind("one line")
        else:
            error = kind(*(Path("/x") if p.name in ("path", "where") else (1 if p.name == "count" else "w") for p in wanted))
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is kind and str(again) == str(error), kind
