"""Paths on their edges (paths.py, #44): what each kind of file is called, a refusal that
survives the trip from a worker, and a FIFO swapped in after the check closed again. Each test
names the edit it fails with."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

import notifier.paths as paths
from notifier.paths import NotRegularFile, file_kind, open_regular


def test_each_kind_of_file_is_said_in_words() -> None:
    """(edits: each ``return`` made a raise)"""
    assert file_kind(stat.S_IFDIR) == "a folder"
    assert file_kind(stat.S_IFIFO) == "a named pipe (FIFO)"
    assert file_kind(stat.S_IFCHR) == "a character device"
    assert file_kind(stat.S_IFBLK) == "a block device"
    assert file_kind(stat.S_IFSOCK) == "a socket"
    assert file_kind(stat.S_IFLNK) == "not a regular file"


def test_a_refusal_keeps_its_words_and_survives_pickling() -> None:
    """Its message is an OSError's first argument (edit: ``super().__init__`` left out), and it is
    made again whole after pickling, as a worker's exception is sent to the main process (the
    fault: OSError's way called ``__init__`` with the message alone, a TypeError)."""
    error = NotRegularFile("/srv/site/sitemap.xml", stat.S_IFIFO)
    assert error.args == ("is a named pipe (FIFO), not a regular file",)
    assert str(error) == "/srv/site/sitemap.xml: is a named pipe (FIFO), not a regular file"
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, NotRegularFile) and str(again) == str(error) and again.strerror == error.strerror


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_a_fifo_swapped_in_after_the_check_is_refused_and_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path checked was a file; what was opened is a FIFO (the check on the descriptor):
    refused, and its descriptor closed (edits: ``os.close(fd)`` left out or made a raise)."""
    fifo = tmp_path / "ledger"
    os.mkfifo(fifo)
    monkeypatch.setattr(paths, "refuse_irregular", lambda path: None)  # as if the FIFO came after the stat
    before = len(list(Path("/proc/self/fd").iterdir()))
    with pytest.raises(NotRegularFile, match="named pipe"):
        open_regular(fifo, os.O_RDONLY)
    assert len(list(Path("/proc/self/fd").iterdir())) == before
    fifo.unlink()
