"""Live delivery: a running turn's events handed to readers in every process of this host as
they are made, without a database transaction; the durable writes come less often (`sink.py`).

Each process binds one Unix datagram socket in a run folder of the app's own (`live_folder`:
one per database, readable by the app's user alone); a writer sends each batch's note
(`notes.encode_note`) to every other socket there, and each process's receiver wakes its
readers with the events (`Wakeups`). With `REDIS_URL` set, Redis pub/sub carries the same
notes to every host instead (`RedisListener`), and no socket is used.

Nothing here is the truth: a note that is lost (a full socket buffer, a process that starts
after the batch was sent) leaves its readers a gap in the event ids, which they fill from the
database once the turn stores them; a reader with a gap asks the writer to store at once
(`store_key`), over this same channel.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from .notes import StoredEvent, decode_note, encode_note
from .wakeups import Wakeups

log = logging.getLogger(__name__)

# Linux takes datagrams up to the socket's send buffer (about 208 KB by default); a batch's
# note past this is not sent live, and the turn stores it at once instead.
LIVE_NOTE_BYTES = 60_000
STORE_PREFIX = "store:"  # a reader's request that the turn store what it has sent live
PEERS_SECONDS = 1.0  # how long a listing of the folder's sockets is used before a new one


ENDING_PREFIX = "ending:"  # ... and that it is being ended: store every batch from now on
# The runner's answer to that: it stored all it handed out, and hands out nothing unstored.
STORING_PREFIX = "storing:"


# What a request (or the runner's answer to one) carries: a wake-up of every key (a listener
# reconnecting) carries nothing, and says nothing.
ASKED = (StoredEvent(0, "asked", ""),)


def asked(news: tuple[list[StoredEvent], bool]) -> bool:
    """Tell whether an inbox's news (`Inbox.take`) holds a request (or its answer)."""
    return any(event.event == "asked" for event in news[0])


def store_key(message_id: str) -> str:
    """The wake-up key on which a running turn hears that a reader wants its events stored."""
    return STORE_PREFIX + message_id


def ending_key(message_id: str) -> str:
    """The key on which a running turn hears that it is being ended from another process."""
    return ENDING_PREFIX + message_id


def storing_key(message_id: str) -> str:
    """The key on which an end from another process hears that the runner stored what it
    handed out live, and from then on stores each batch before handing it out."""
    return STORING_PREFIX + message_id


class LiveChannel(Protocol):
    """How a batch reaches the readers of other processes before it is stored."""

    def send(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> bool:
        """Hand the note to every other process; False if it could not carry `events`."""

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        """Wake this process's readers with other processes' notes until `stop` is set."""


def live_folder(database_url: str) -> Path:
    """The run folder this app's processes on this host share: one per database."""
    digest = hashlib.sha256(database_url.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"webapp-live-{os.getuid()}-{digest}"


class SocketChannel:
    """One Unix datagram socket per process, in a folder only the app's user can enter.

    A process binds its socket when its receiver runs (a served worker's `Upkeep`); one that
    never listens (a CLI command) only sends. Sockets of processes that are gone are removed
    by the next sender that finds them refusing.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._path = folder / f"{os.getpid()}-{os.urandom(4).hex()}.sock"
        self._peers: list[str] = []
        self._listed_at = float("-inf")
        self._lock = threading.Lock()
        self._safe: bool | None = None

    def _ours(self) -> bool:
        """Tell whether the folder is this user's alone (never send events to another's)."""
        if self._safe is None:
            try:
                info = self._folder.stat()
            except FileNotFoundError:
                return False  # no process listens yet
            self._safe = info.st_uid == os.getuid() and not info.st_mode & 0o077
            if not self._safe:
                log.warning("%s is not this user's alone: no live notes", self._folder)
        return self._safe

    def _others(self) -> list[str]:
        with self._lock:
            if time.monotonic() - self._listed_at > PEERS_SECONDS:
                self._peers = (
                    [str(p) for p in self._folder.glob("*.sock") if p.name != self._path.name]
                    if self._ours()
                    else []
                )
                self._listed_at = time.monotonic()
            return list(self._peers)

    def send(self, message_id: str, events: Sequence[StoredEvent] | None = None) -> bool:
        note = encode_note(message_id, events, LIVE_NOTE_BYTES)
        carried = not events or note != message_id
        data, peers = note.encode("ascii"), self._others()
        if not peers:
            return carried
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.setblocking(False)  # a full peer drops the note; its readers fill the gap
            for peer in peers:
                try:
                    sender.sendto(data, peer)
                except (ConnectionRefusedError, FileNotFoundError):
                    with contextlib.suppress(OSError):  # a process that is gone
                        os.unlink(peer)
                except OSError:
                    pass  # full: its readers find a gap and read the stored events
        return carried

    def run(self, wakeups: Wakeups, stop: threading.Event) -> None:
        try:
            self._folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            log.warning("no live notes between processes (%s)", type(exc).__name__)
            return
        if not self._ours():
            return
        receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        receiver.bind(str(self._path))
        receiver.settimeout(1.0)
        with self._lock:
            self._listed_at = float("-inf")  # others see this one; this one sees them
        wakeups.wake_all()  # as the other listeners do when they start
        try:
            while not stop.is_set():
                try:
                    data = receiver.recv(LIVE_NOTE_BYTES + 1024)
                except TimeoutError:
                    continue
                wakeups.wake(*decode_note(data.decode("ascii", "replace")))
        except OSError as exc:
            log.warning("live notes stopped (%s)", type(exc).__name__)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
            receiver.close()


def socket_channel(database_url: str) -> SocketChannel:
    """This process's live channel to the app's other processes on this host."""
    return SocketChannel(live_folder(database_url))
