"""What /proc says about the servers' processes: children, CPU time, RSS, and which process
holds a given TCP connection (by its socket inode)."""

from __future__ import annotations

import contextlib
import os


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return text[text.rindex(")") + 2 :].split()  # after "pid (comm) "


def parent(pid: int) -> int | None:
    try:
        return int(_stat_fields(pid)[1])
    except (OSError, ValueError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """Return when `pid` started (clock ticks since boot): with the pid, it names one process."""
    try:
        return int(_stat_fields(pid)[19])
    except (OSError, ValueError, IndexError):
        return None


def children(pid: int) -> list[int]:
    """Return the live children of `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and parent(int(entry)) == pid:
            found.append(int(entry))
    return sorted(found)


def cpu_seconds(pids: list[int]) -> float:
    """Return the user + system CPU time the processes have used."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = _stat_fields(pid)
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/statm") as f:
            total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return total


def _tcp_sockets() -> list[tuple[int, int, int]]:
    """Return (local port, remote port, inode) of every established IPv4/IPv6 TCP socket."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "01":
                local = int(parts[1].rsplit(":", 1)[1], 16)
                remote = int(parts[2].rsplit(":", 1)[1], 16)
                found.append((local, remote, int(parts[9])))
    return found


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
    return inodes


def socket_owners(
    pids: list[int], local: int | None = None, remote: int | None = None
) -> list[int]:
    """Return which of `pids` hold a TCP socket with the given local and/or remote port."""
    wanted = {
        inode
        for lport, rport, inode in _tcp_sockets()
        if (local is None or lport == local) and (remote is None or rport == remote)
    }
    return [pid for pid in pids if _socket_inodes(pid) & wanted] if wanted else []
