#!/usr/bin/env python3
"""scripts/lib/bench.py: the clients and probes of scripts/bench (python3
standard library only), one subcommand each; see the top of scripts/bench.

  sample-rss ROOT OUT         every 100 ms, the summed VmRSS (KiB) of ROOT and
                              its children; the peak kept in OUT until killed
  cpu-ticks ROOT              clock ticks of CPU (user + system) that ROOT and
                              its children used so far
  put-files BASE USER:PASS CA COLLECTION COUNT CONNECTIONS [PREFIX]
                              MKCOL BASE/COLLECTION/, then COUNT distinct 4 KiB
                              PUTs into it from CONNECTIONS processes, each with
                              its own kept-alive TLS connection; prints files/s,
                              seconds and reconnections. With PREFIX: into the
                              existing COLLECTION (no MKCOL), as PREFIX-NNNNN.bin
  get-latency BASE USER:PASS CA FOLDER BODY
                              PROPFIND Depth 1 of BASE/<name of FOLDER>/, then
                              a GET of each file of the local FOLDER on one
                              kept-alive connection, each checked against the
                              local file; prints median, p90, max (ms) and the
                              connections opened
  haproxy-stat SOCKET BACKEND
                              from HAProxy's stats socket (show stat), a line
                              per server of BACKEND: its name, the responses
                              it gave (hrsp_*), of them 5xx, and its
                              connection and response errors (econ, eresp)
  fsync-floor FOLDER SECONDS WRITERS
                              new 4 KiB files, each fsynced and its folder
                              fsynced, from WRITERS threads for SECONDS;
                              prints files/s
  create-rate FOLDER COUNT    COUNT empty files in a new FOLDER, kept, one
                              thread; prints files/s (slow on a disk where
                              many files were deleted in the last minutes)
  make-files FOLDER COUNT SIZE
                              COUNT files in a new FOLDER: SIZE random bytes
                              each, or with SIZE 0 a short line of text
"""

import base64
import csv
import http.client
import io
import math
import multiprocessing
import os
import socket
import ssl
import statistics
import sys
import threading
import time
from urllib.parse import urlsplit


# ----------------------------------------------------------- processes
def _stat_fields(pid):
    """Fields of /proc/PID/stat after the command name (field 3 is index 0)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _children(root):
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if int(_stat_fields(name)[1]) == root:
                    found.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample_rss(root, out):
    root = int(root)
    peak, kids, tick = 0, [], 0
    while True:
        if tick % 5 == 0:            # Apache starts and stops children as load changes
            kids = _children(root)
        tick += 1
        total = _rss(root) + sum(_rss(c) for c in kids)
        if total > peak:
            peak = total
            with open(out + ".tmp", "w") as f:
                f.write(str(peak))
            os.replace(out + ".tmp", out)
        time.sleep(0.1)


def cpu_ticks(root):
    # The root's utime + stime + cutime + cstime (fields 14-17: cutime and
    # cstime hold the children it has reaped, so a worker that exits between
    # two readings still counts) plus utime + stime of the live children.
    root = int(root)
    fields = _stat_fields(root)
    total = sum(int(x) for x in fields[11:15])
    for child in _children(root):
        try:
            total += sum(int(x) for x in _stat_fields(child)[11:13])
        except (OSError, ValueError, IndexError):
            pass
    print(total)


# ---------------------------------------------------------------- HTTP
def _connection(base, ca, counter=None):
    url = urlsplit(base)
    if url.scheme == "https":
        cls, extra = http.client.HTTPSConnection, {"context": ssl.create_default_context(cafile=ca)}
    else:
        cls, extra = http.client.HTTPConnection, {}

    class Counted(cls):
        def connect(self):
            if counter is not None:
                counter.append(1)
            super().connect()

    return Counted(url.hostname, url.port, timeout=120, **extra), url.path.rstrip("/")


def _auth(user_pass):
    return {"Authorization": "Basic " + base64.b64encode(user_pass.encode()).decode()}


def run_workers(count, processes, work, label):
    """Runs work(first, last, ready) in PROCESSES forked processes, range(COUNT)
    split evenly between them; each calls ready() once set up, and the clock
    starts when all have. Returns the seconds until the last one finished;
    exits with the first errors when any failed (one that fails before it is
    ready breaks the start line, so the rest do not wait for it)."""
    context = multiprocessing.get_context("fork")
    errors = context.SimpleQueue()
    start_line = context.Barrier(processes + 1)

    def run(first, last):
        try:
            work(first, last, start_line.wait)
        except BaseException as error:             # reported, not lost with the process
            errors.put(f"{label} worker {first}-{last}: {error!r}")
            start_line.abort()
        finally:
            os._exit(0)

    per = math.ceil(count / processes)
    workers = [context.Process(target=run, args=(t * per, min(count, (t + 1) * per))) for t in range(processes)]
    for w in workers:
        w.start()
    try:
        start_line.wait()
    except threading.BrokenBarrierError:           # a worker failed before the start: its error follows
        pass
    start = time.perf_counter()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - start
    failed = []
    while not errors.empty():
        failed.append(errors.get())
    if failed:
        sys.exit("; ".join(failed[:5]))
    return seconds


def put_files(base, user_pass, ca, collection, count, connections, prefix=None):
    # One process per connection, not a thread: with threads, every response
    # must take Python's interpreter lock back, and responses that arrive
    # together (a server's grouped fsync answers several PUTs at once) made
    # the threads fight for it. Against davgate the client then spent 173 us
    # of CPU a PUT, against Apache 136, on the two cores it shares with the
    # server; as processes it spends the same against both (155 us), as
    # eight separate clients would (issue 14).
    count, connections = int(count), int(connections)
    auth = _auth(user_pass)
    conn, path = _connection(base, ca)
    folder = f"{path}/{collection}/"
    if prefix is None:
        conn.request("MKCOL", folder, headers=auth)
        answer = conn.getresponse()
        answer.read()
        conn.close()
        if answer.status != 201:
            sys.exit(f"MKCOL {folder} answered {answer.status}")

    reconnects = multiprocessing.get_context("fork").Value("i", 0)

    class Connects(list):
        def append(self, item):
            with reconnects.get_lock():
                reconnects.value += 1

    def work(first, last, ready):
        conn, _ = _connection(base, ca, Connects())
        body = bytearray(os.urandom(4096))
        conn.connect()
        ready()
        for i in range(first, last):
            body[:8] = i.to_bytes(8, "big")        # distinct content per file
            name = f"{folder}{prefix or 'put'}-{i:05d}.bin"
            for attempt in (1, 2):                 # a PUT is idempotent: retry once on a dropped connection
                try:
                    conn.request("PUT", name, body=bytes(body),
                                 headers={**auth, "Content-Type": "application/octet-stream"})
                    answer = conn.getresponse()
                    reply = answer.read()
                    break
                except (http.client.RemoteDisconnected, ConnectionError) as error:
                    conn.close()
                    if attempt == 2:
                        raise RuntimeError(f"PUT {name}: {error}") from None
            if answer.status not in (201, 204):
                text = reply[:300].decode("utf-8", "replace").replace("\n", " ")
                raise RuntimeError(f"PUT {name} answered {answer.status}: {text}")
        conn.close()

    seconds = run_workers(count, connections, work, "PUT")
    print(f"{count / seconds:.0f} {seconds:.3f} {reconnects.value - connections}")


def get_latency(base, user_pass, ca, local, body):
    opened = []
    conn, path = _connection(base, ca or None, opened)
    folder = f"{path}/{os.path.basename(local.rstrip('/'))}/"
    auth = _auth(user_pass)
    conn.request("PROPFIND", folder, body=body,
                 headers={**auth, "Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
    answer = conn.getresponse()
    answer.read()
    if answer.status != 207:
        sys.exit(f"PROPFIND {folder} answered {answer.status}")
    times = []
    for name in sorted(os.listdir(local)):
        with open(os.path.join(local, name), "rb") as f:
            expected = f.read()
        start = time.perf_counter()
        conn.request("GET", folder + name, headers=auth)
        answer = conn.getresponse()
        got = answer.read()
        times.append((time.perf_counter() - start) * 1000)
        if answer.status != 200 or got != expected:
            sys.exit(f"GET {folder}{name} answered {answer.status} with {len(got)} bytes, not the file's {len(expected)}")
    times.sort()
    p90 = times[math.ceil(0.9 * len(times)) - 1]
    print(f"{statistics.median(times):.2f} {p90:.2f} {times[-1]:.2f} {len(opened)}")


# ------------------------------------------------------------- HAProxy
def haproxy_stat(sock, backend):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    s.sendall(b"show stat\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    rows = csv.DictReader(io.StringIO(data.decode().lstrip("# ")))
    for row in rows:
        if row["pxname"] != backend or row["svname"] in ("FRONTEND", "BACKEND"):
            continue
        answered = sum(int(row[f"hrsp_{c}"] or 0) for c in ("1xx", "2xx", "3xx", "4xx", "5xx", "other"))
        print(row["svname"], answered, int(row["hrsp_5xx"] or 0), int(row["econ"] or 0), int(row["eresp"] or 0))


# ---------------------------------------------------------------- disk
def fsync_floor(folder, seconds, writers):
    seconds, writers = float(seconds), int(writers)
    os.makedirs(folder)
    data = os.urandom(4096)
    made = [0] * writers
    deadline = time.perf_counter() + seconds

    def writer(w):
        directory = os.open(folder, os.O_RDONLY)
        while time.perf_counter() < deadline:
            fd = os.open(os.path.join(folder, f"{w}-{made[w]}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
            os.fsync(directory)
            made[w] += 1
        os.close(directory)

    start = time.perf_counter()
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"{sum(made) / (time.perf_counter() - start):.0f}")


def create_rate(folder, count):
    count = int(count)
    os.makedirs(folder)
    start = time.perf_counter()
    for i in range(count):
        os.close(os.open(os.path.join(folder, f"{i:05d}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    print(f"{count / (time.perf_counter() - start):.0f}")


def make_files(folder, count, size):
    count, size = int(count), int(size)
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        if size:
            with open(os.path.join(folder, f"small-{i:04d}.bin"), "wb") as f:
                f.write(os.urandom(size))
        else:
            with open(os.path.join(folder, f"file-{i:05d}.txt"), "w") as f:
                f.write(f"file {i}\n")


COMMANDS = {
    "sample-rss": sample_rss,
    "cpu-ticks": cpu_ticks,
    "put-files": put_files,
    "get-latency": get_latency,
    "haproxy-stat": haproxy_stat,
    "fsync-floor": fsync_floor,
    "create-rate": create_rate,
    "make-files": make_files,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
