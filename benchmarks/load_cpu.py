"""CPU accounting for the load benchmark (``benchmarks/load.py``), from /proc: gunicorn's,
PostgreSQL's, the client's and the whole machine's share during a phase; and the client's
scheduling priority."""

from __future__ import annotations

import os
import time
from pathlib import Path


def process_cpu(pid: int) -> tuple[str, float] | None:
    """(command name, CPU seconds) of a live process, from /proc; None when it is gone. The
    seconds are its own user + system time and that of its children that have exited and been
    waited for (``cutime``, ``cstime``): when a PostgreSQL backend or a gunicorn worker exits,
    its time moves to its parent's, so a sum over the live processes does not lose it."""
    try:
        name, fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)
    except OSError:
        return None
    values = fields.split()
    ticks = sum(int(v) for v in values[11:15])  # utime, stime, cutime, cstime
    return name.partition("(")[2], ticks / os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pid: int) -> float:
    """CPU of a process (with its exited children) and its live children: gunicorn's master and
    workers, from /proc."""
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        return 0.0
    return sum(found[1] for p in pids if (found := process_cpu(p)) is not None)


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def postgres_cpu_seconds() -> float:
    """CPU of the PostgreSQL processes on this machine: the server and its live backends, and
    the backends that have exited (counted in the server's children's time). A backend closed
    during a phase (a persistent connection past its ``conn_max_age``) is still counted; before,
    its whole lifetime dropped out of the sum and PostgreSQL's share could read 0."""
    pids = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    found = [process_cpu(pid) for pid in pids]
    return sum(seconds for name, seconds in filter(None, found) if name == "postgres")


class CpuShares:
    """CPU used during a phase, in cores: gunicorn (master and workers), PostgreSQL, this
    process (the client), and the whole machine (also Redis, the kernel's share of the network
    and whatever else runs); and per request, when the count of requests is given."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.wall = time.perf_counter()
        self.client = time.process_time()
        self.server = group_cpu_seconds(server_pid)
        self.postgres = postgres_cpu_seconds()
        self.machine = machine_ticks()

    def line(self, requests: int = 0) -> str:
        wall = time.perf_counter() - self.wall
        busy, total = machine_ticks()
        cores = os.cpu_count() or 1
        machine = (busy - self.machine[0]) / max(total - self.machine[1], 1) * cores
        server = (group_cpu_seconds(self.server_pid) - self.server) / wall
        postgres = (postgres_cpu_seconds() - self.postgres) / wall
        client = (time.process_time() - self.client) / wall
        line = (
            f"CPU: gunicorn {server:.2f} cores, PostgreSQL {postgres:.2f}, client {client:.2f}, "
            f"whole machine {machine:.2f} of {cores}"
        )
        if requests:
            per = wall / requests * 1000
            line += (
                f"; per request: gunicorn {server * per:.2f} ms, PostgreSQL "
                f"{postgres * per:.2f} ms, client {client * per:.2f} ms, machine "
                f"{machine * per:.2f} ms"
            )
        return line


def raise_client_priority(nice: int) -> str:
    """Give this process (the client, all its threads started from now on) the scheduling
    priority ``nice``. The client shares the cores with the server, which annotators' browsers
    do not: at the same priority, a response that waits in its socket while the client waits for
    a core is counted as server latency. A lower nice value lets the client run first when a
    response arrives (its CPU is still taken from the server). Says what was done; needs root
    or CAP_SYS_NICE to go below 0."""
    if nice == 0:
        return "client priority: unchanged (nice 0, as the server)"
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except PermissionError:
        return f"client priority: unchanged, nice {nice} is not permitted here (needs root)"
    return f"client priority: nice {nice} (server at 0)"
