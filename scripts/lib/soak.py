#!/usr/bin/env python3
"""scripts/lib/soak.py: the load generator and the checks of scripts/soak.

Standard library only. Subcommands (scripts/soak calls them in this order):

  sample  PID OUT         VmRSS, open descriptors and threads of PID, one
                          line a second ("epoch rss_kib fds threads") until
                          killed or PID is gone
  setup                   MKCOL of /DOMAIN/soak/ and one folder per client
  load                    CLIENTS threads for SECONDS: mixed PUT, GET,
                          PROPFIND Depth 0/1, LOCK+PUT+UNLOCK, MOVE, DELETE,
                          each client in its own folder; writes what each
                          client last saw acknowledged and every status
  drain                   polls /.davgate/status.json until the write-back
                          queue is empty (nothing pending, nothing in flight)
  fds     PID             number of open descriptors of PID, by kind (JSON)
  verify                  compares an upstream folder on disk with the record
  report                  the table, the RSS curve and the verdicts; exits 1
                          when any check failed

The server's URL, user and CA come from options; the password from the
environment (SOAK_PASSWORD), never from the command line.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import random
import ssl
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

MiB = 1 << 20
DAV = "{DAV:}"
NAMES = [f"f{i:02d}.bin" for i in range(16)]     # each client's name pool
# Operation mix (weights): PUT, GET, PROPFIND (half Depth 0, half Depth 1),
# LOCK + PUT with the token + UNLOCK, MOVE within the folder, DELETE.
MIX = [("put", 30), ("get", 25), ("propfind", 15), ("lockput", 10), ("move", 10), ("delete", 10)]
LOCK_BODY = (b'<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:">'
             b'<D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>'
             b'<D:owner>soak</D:owner></D:lockinfo>')
PROPFIND_BODY = (b'<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop>'
                 b'<D:resourcetype/><D:getcontentlength/><D:getetag/></D:prop></D:propfind>')
ABSENT = None      # a possible state of a name: absent; otherwise the sha256 hex
POOL = os.urandom(4 * MiB)


def now():
    return time.time()


def sha(data):
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------- sampling
def proc_status(pid):
    rss = threads = None
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def fd_kinds(pid):
    kinds = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:"):
            kind = "socket"
        elif target.startswith("pipe:"):
            kind = "pipe"
        elif target.startswith("anon_inode:"):
            kind = target[len("anon_inode:"):].strip("[]")
        elif target.startswith("/dev/"):
            kind = "device"
        else:
            kind = "file"
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def cmd_sample(args):
    with open(args.out, "a", buffering=1) as out:
        while True:
            try:
                rss, threads = proc_status(args.pid)
                fds = len(os.listdir(f"/proc/{args.pid}/fd"))
            except (OSError, ValueError):
                return 0
            out.write(f"{now():.3f} {rss} {fds} {threads}\n")
            time.sleep(1.0 - now() % 1.0)      # on the second


def cmd_fds(args):
    kinds = fd_kinds(args.pid)
    files = []
    for name in os.listdir(f"/proc/{args.pid}/fd"):
        try:
            target = os.readlink(f"/proc/{args.pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("/") and not target.startswith("/dev/"):
            files.append(target)
    print(json.dumps({"total": sum(kinds.values()), "kinds": kinds, "files": sorted(files)}))
    return 0


# ------------------------------------------------------------------- client
class Server:
    def __init__(self, args):
        self.url = urllib.parse.urlsplit(args.url.rstrip("/") + "/")
        self.host, self.port = self.url.hostname, self.url.port or 443
        self.base = self.url.path                      # /files/
        password = os.environ.get("SOAK_PASSWORD")
        if password is None:
            sys.exit("soak.py: SOAK_PASSWORD is not set")
        token = base64.b64encode(f"{args.user}:{password}".encode()).decode()
        self.auth = f"Basic {token}"
        self.context = ssl.create_default_context(cafile=args.ca) if args.ca else ssl._create_unverified_context()
        self.timeout = args.timeout

    def origin(self):
        return f"{self.url.scheme}://{self.url.netloc}"


class TransportError(Exception):
    pass


class Connection:
    """One keep-alive TLS connection; reconnects when the server closed it."""

    def __init__(self, server, stats):
        self.server, self.stats, self.conn, self.used = server, stats, None, 0

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, headers=None):
        """Returns (status, headers, body, start, end). Raises TransportError."""
        h = {"Authorization": self.server.auth}
        if headers:
            h.update(headers)
        start = now()
        for attempt in (0, 1):
            fresh = self.conn is None
            if fresh:
                self.conn = http.client.HTTPSConnection(self.server.host, self.server.port,
                                                        context=self.server.context, timeout=self.server.timeout)
                self.stats.bump("connections")
            try:
                self.conn.request(method, path, body=body, headers=h)
                response = self.conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ssl.SSLEOFError) as error:
                self.close()
                # A kept-alive connection the server closed before this request:
                # nothing of it was answered, so sending it again is safe once.
                if not fresh and attempt == 0:
                    self.stats.bump("stale_connection_retries")
                    continue
                raise TransportError(f"{type(error).__name__}: {error}") from None
            except (OSError, http.client.HTTPException) as error:
                self.close()
                raise TransportError(f"{type(error).__name__}: {error}") from None
            if response.will_close:
                self.close()
            return response.status, response, data, start, now()
        raise AssertionError("unreachable")


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}            # method -> status -> n
        self.counters = {}
        self.events = {"5xx": [], "unexpected": [], "transport": [], "get_mismatch": [],
                       "listing_mismatch": [], "size_mismatch": []}

    def bump(self, key, n=1):
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + n

    def status(self, method, status):
        with self.lock:
            per = self.counts.setdefault(method, {})
            per[str(status)] = per.get(str(status), 0) + 1

    def event(self, kind, **fields):
        with self.lock:
            if len(self.events[kind]) < 2000:
                self.events[kind].append(fields)
            self.counters["events_" + kind] = self.counters.get("events_" + kind, 0) + 1


class Client(threading.Thread):
    """One client: its own folder, a model of what it holds, a request loop."""

    def __init__(self, number, server, stats, deadline, seed, max_size):
        super().__init__(name=f"client-{number}", daemon=True)
        self.number, self.server, self.stats, self.deadline = number, server, stats, deadline
        self.rng = random.Random(seed * 1000 + number)
        self.folder = f"{server.base}soak/c{number:02d}/"
        self.conn = Connection(server, stats)
        self.max_size = max_size
        # name -> set of possible states (sha256 hex, or ABSENT); one element
        # when the client knows; more after an answer that leaves it open.
        self.state = {name: {ABSENT} for name in NAMES}
        self.sizes = {}             # sha256 -> size
        self.locked_until = {}      # name -> when a lock we could not release ends
        self.ops = 0
        self.error = None
        self.log = []               # every request: start, end, method, name, detail, status

    # -- the model
    def known(self, name):
        s = self.state[name]
        return next(iter(s)) if len(s) == 1 else "?"

    def present(self):
        return [n for n in NAMES if self.known(n) not in (ABSENT, "?") and self.free(n)]

    def free(self, name):
        return self.locked_until.get(name, 0) < now()

    def uncertain(self, name, *possible):
        self.state[name] = set(self.state[name]) | set(possible)
        self.stats.bump("paths_made_uncertain")

    def describe(self, name):
        return "/".join("absent" if p is ABSENT else p[:12] for p in sorted(self.state[name], key=str))

    def href(self, name):
        return self.folder + urllib.parse.quote(name)

    # -- one request, counted and judged
    def send(self, method, name, expected, body=None, headers=None, label=None, detail=""):
        path = self.href(name) if name is not None else self.folder
        try:
            status, response, data, start, end = self.conn.request(method, path, body, headers)
        except TransportError as error:
            self.log.append((now(), now(), method, name or "/", detail, "transport"))
            self.stats.status(label or method, "transport")
            self.stats.event("transport", method=method, path=path, error=str(error), t=now())
            return None, None, None
        if method == "GET" and status == 200:
            detail = f"got {sha(data)[:12]} {len(data)} B"
        self.log.append((start, end, method, name or "/", detail, status))
        self.stats.status(label or method, status)
        self.stats.bump("bytes_sent", len(body) if body else 0)
        self.stats.bump("bytes_received", len(data))
        if status >= 500:
            self.stats.event("5xx", method=method, path=path, status=status, start=start, end=end,
                             body=data[:300].decode("utf-8", "replace"))
        elif status not in expected:
            self.stats.event("unexpected", method=method, path=path, status=status, expected=sorted(expected),
                             t=start, body=data[:300].decode("utf-8", "replace"))
        return status, response, data

    def random_body(self):
        """0 to max_size random bytes (sizes skewed small, 3% empty): 32 fresh
        bytes, so every body differs, then a slice of a shared random pool at
        a random offset (generating a MiB each time would hold the GIL)."""
        r = self.rng.random()
        size = 0 if r < 0.03 else int(self.rng.random() ** 2 * self.max_size)
        if size <= 32:
            return os.urandom(size)
        offset = self.rng.randrange(len(POOL) - size)
        return os.urandom(32) + POOL[offset:offset + size - 32]

    # -- operations
    def op_put(self, name=None, token=None):
        if name is None:
            choices = self.present()
            if choices and self.rng.random() < 0.5:
                name = self.rng.choice(choices)
            else:
                name = self.rng.choice([n for n in NAMES if self.free(n)] or NAMES)
        body = self.random_body()
        digest = sha(body)
        known = self.known(name)
        expected = {201} if known is ABSENT else {204} if known != "?" else {201, 204}
        headers = {"Content-Type": "application/octet-stream"}
        if token:
            headers["If"] = f"(<{token}>)"
        status, _, _ = self.send("PUT", name, expected, body, headers,
                                 detail=f"{digest[:12]} {len(body)} B{' locked' if token else ''} (was {self.describe(name)})")
        if status in (200, 201, 204):
            self.state[name] = {digest}
            self.sizes[digest] = len(body)
            self.stats.bump("puts_acknowledged")
            self.stats.bump("bytes_acknowledged", len(body))
        elif status is None or status >= 500:
            self.uncertain(name, digest)      # may or may not have been taken
            self.sizes[digest] = len(body)

    def op_get(self):
        candidates = [n for n in NAMES if self.known(n) is not ABSENT and self.free(n)]
        if not candidates or self.rng.random() < 0.1:
            candidates = [n for n in NAMES if self.known(n) is ABSENT] or candidates
        if not candidates:
            return self.op_put()
        name = self.rng.choice(candidates)
        possible = self.state[name]
        expected = set()
        if ABSENT in possible:
            expected.add(404)
        if possible - {ABSENT}:
            expected.add(200)
        status, _, data = self.send("GET", name, expected)
        if status == 200:
            digest = sha(data)
            if digest in possible:
                self.state[name] = {digest}
                self.stats.bump("gets_verified")
                self.stats.bump("bytes_get_verified", len(data))
            else:
                self.stats.event("get_mismatch", path=self.href(name), got=digest, size=len(data),
                                 expected=sorted(p or "absent" for p in possible), t=now())
        elif status == 404 and ABSENT in possible:
            self.state[name] = {ABSENT}

    def op_propfind(self):
        if self.rng.random() < 0.5:
            return self.propfind_folder()
        candidates = [n for n in NAMES if self.known(n) not in ("?",) and self.free(n)]
        name = self.rng.choice(candidates or NAMES)
        known = self.known(name)
        expected = {404} if known is ABSENT else {207} if known != "?" else {207, 404}
        status, _, data = self.send("PROPFIND", name, expected, PROPFIND_BODY,
                                    {"Depth": "0", "Content-Type": "application/xml; charset=utf-8"})
        if status == 207 and known not in (ABSENT, "?"):
            try:
                lengths = [e.text for e in ET.fromstring(data).iter(DAV + "getcontentlength")]
            except ET.ParseError as error:
                self.stats.event("size_mismatch", path=self.href(name), error=f"bad XML: {error}", t=now())
                return
            if lengths != [str(self.sizes[known])]:
                self.stats.event("size_mismatch", path=self.href(name), got=lengths,
                                 expected=self.sizes[known], t=now())

    def propfind_folder(self):
        status, _, data = self.send("PROPFIND", None, {207}, PROPFIND_BODY,
                                    {"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
        if status != 207:
            return
        try:
            hrefs = [e.text or "" for e in ET.fromstring(data).iter(DAV + "href")]
        except ET.ParseError as error:
            self.stats.event("listing_mismatch", path=self.folder, error=f"bad XML: {error}", t=now())
            return
        listed = set()
        for href in hrefs:
            path = urllib.parse.unquote(urllib.parse.urlsplit(href).path)
            if path.rstrip("/") == self.folder.rstrip("/"):
                continue
            listed.add(path[len(self.folder):] if path.startswith(self.folder) else path)
        problems = []
        for name in NAMES:
            known = self.known(name)
            if known is ABSENT and name in listed:
                problems.append(f"{name} listed, but deleted or moved away")
            elif known not in (ABSENT, "?") and name not in listed:
                problems.append(f"{name} missing from the listing")
        problems += [f"{name} listed, never written" for name in sorted(listed - set(NAMES))]
        self.stats.bump("listings_checked")
        if problems:
            self.stats.event("listing_mismatch", path=self.folder, problems=problems, t=now())

    def op_lockput(self):
        choices = self.present()
        if choices and self.rng.random() < 0.6:
            name = self.rng.choice(choices)
        else:
            absent = [n for n in NAMES if self.known(n) is ABSENT and self.free(n)]
            if not absent:
                return self.op_put()
            name = self.rng.choice(absent)
        known = self.known(name)
        status, response, _ = self.send("LOCK", name, {201} if known is ABSENT else {200}, LOCK_BODY,
                                        {"Depth": "0", "Timeout": "Second-120",
                                         "Content-Type": "application/xml; charset=utf-8"})
        if status not in (200, 201):
            if status is None or status >= 500:
                self.uncertain(name, sha(b""))            # a LOCK may create an empty file
                self.locked_until[name] = now() + 125   # and a lock we hold no token of
            return
        if status == 201:
            self.state[name] = {sha(b"")}
            self.sizes[sha(b"")] = 0
        token = (response.getheader("Lock-Token") or "").strip().strip("<>")
        if not token:
            self.stats.event("unexpected", method="LOCK", path=self.href(name), status=status,
                             expected=["a Lock-Token header"], t=now(), body="")
            self.locked_until[name] = now() + 125
            return
        self.op_put(name, token)
        status, _, _ = self.send("UNLOCK", name, {204}, headers={"Lock-Token": f"<{token}>"})
        if status != 204:
            self.locked_until[name] = now() + 125

    def op_move(self):
        choices = self.present()
        if not choices:
            return self.op_put()
        source = self.rng.choice(choices)
        targets = [n for n in NAMES if n != source and self.free(n)]
        target = self.rng.choice(targets)
        known = self.known(target)
        expected = {201} if known is ABSENT else {204} if known != "?" else {201, 204}
        destination = self.server.origin() + self.href(target)
        status, _, _ = self.send("MOVE", source, expected, headers={"Destination": destination, "Overwrite": "T"},
                                 detail=f"to {target} (was {self.describe(target)}), carrying {self.describe(source)}")
        content = self.known(source)
        if status in (201, 204):
            self.state[target] = {content}
            self.state[source] = {ABSENT}
            self.stats.bump("moves_acknowledged")
        elif status is None or status >= 500:
            self.uncertain(source, ABSENT)
            self.uncertain(target, content)

    def op_delete(self):
        choices = self.present()
        if not choices:
            return self.op_put()
        name = self.rng.choice(choices)
        status, _, _ = self.send("DELETE", name, {204})
        if status in (200, 204):
            self.state[name] = {ABSENT}
            self.stats.bump("deletes_acknowledged")
        elif status is None or status >= 500:
            self.uncertain(name, ABSENT)

    def run(self):
        operations = {name: getattr(self, "op_" + name) for name, _ in MIX}
        names, weights = zip(*MIX)
        try:
            while now() < self.deadline:
                operations[self.rng.choices(names, weights)[0]]()
                self.ops += 1
        except Exception as error:          # a bug here must not pass for a quiet client
            self.error = f"{type(error).__name__}: {error}"
            import traceback
            traceback.print_exc()
        finally:
            self.conn.close()

    def record(self):
        return {"folder": self.folder, "ops": self.ops, "error": self.error,
                "state": {n: sorted(("absent" if s is ABSENT else s) for s in self.state[n]) for n in NAMES},
                "sizes": self.sizes}


def cmd_setup(args):
    server = Server(args)
    stats = Stats()
    conn = Connection(server, stats)
    failures = []
    for path in [f"{server.base}soak/"] + [f"{server.base}soak/c{i:02d}/" for i in range(args.clients)]:
        try:
            status, _, data, _, _ = conn.request("MKCOL", path)
        except TransportError as error:
            failures.append(f"MKCOL {path}: {error}")
            continue
        if status != 201:
            failures.append(f"MKCOL {path}: {status} {data[:200]!r}")
    conn.close()
    for line in failures:
        print("soak: setup: " + line, file=sys.stderr)
    return 1 if failures else 0


def cmd_load(args):
    server = Server(args)
    stats = Stats()
    start = now()
    deadline = start + args.seconds
    clients = [Client(i, server, stats, deadline, args.seed, args.max_size) for i in range(args.clients)]
    for client in clients:
        client.start()
    last = start
    while any(c.is_alive() for c in clients):
        time.sleep(1)
        t = now()
        if t - last >= args.progress and t < deadline:
            total = sum(sum(v.values()) for v in stats.counts.values())
            print(f"   load: {t - start:5.0f} s, {total} requests, {total / (t - start):.0f}/s, "
                  f"5xx {stats.counters.get('events_5xx', 0)}, unexpected {stats.counters.get('events_unexpected', 0)}",
                  file=sys.stderr, flush=True)
            last = t
        if t > deadline + args.grace:
            print(f"soak.py: clients still busy {args.grace} s after the end; giving up on them", file=sys.stderr)
            stats.bump("clients_abandoned", sum(c.is_alive() for c in clients))
            break
    end = now()
    result = {"start": start, "end": end, "seconds": args.seconds, "clients": args.clients,
              "counts": stats.counts, "counters": stats.counters, "events": stats.events,
              "records": [c.record() for c in clients]}
    with open(args.out, "w") as f:
        json.dump(result, f)
    if args.ops:
        # Every request of every client, in time order: the history behind a
        # finding (seconds since the start of the load).
        rows = sorted((start_, end_, c.number, method, name, detail, status)
                      for c in clients for (start_, end_, method, name, detail, status) in c.log)
        with open(args.ops, "w") as f:
            f.write("start\tend\tclient\tmethod\tname\tstatus\tdetail\n")
            for start_, end_, number, method, name, detail, status in rows:
                f.write(f"{start_ - start:.3f}\t{end_ - start:.3f}\tc{number:02d}\t{method}\t{name}\t{status}\t{detail}\n")
    return 0


# -------------------------------------------------------------------- drain
def get_json(server, path):
    conn = Connection(server, Stats())
    try:
        status, _, data, _, _ = conn.request("GET", path)
    finally:
        conn.close()
    if status != 200:
        raise TransportError(f"GET {path}: {status}")
    return data


def cmd_drain(args):
    server = Server(args)
    start = now()
    last_print = 0
    while True:
        try:
            status = json.loads(get_json(server, "/.davgate/status.json"))
        except (TransportError, ValueError) as error:
            print(f"   drain: status.json: {error}", file=sys.stderr)
            status = None
        if status is not None:
            uploads = [d["uploads"] for d in status["domains"]]
            pending = sum(u["pending"] for u in uploads)
            in_flight = sum(u["in_flight"] for u in uploads)
            failed = [f for u in uploads for f in u["failed"]]
            waiting = pending - len(failed)
            if now() - last_print >= 10 or waiting == 0:
                print(f"   drain: {now() - start:4.0f} s: {pending} pending "
                      f"({sum(u['pending_bytes'] for u in uploads)} bytes), {in_flight} in flight, {len(failed)} failed",
                      file=sys.stderr, flush=True)
                last_print = now()
            if waiting <= 0 and in_flight == 0:
                result = {"drained": True, "seconds": now() - start, "failed": failed,
                          "conflicts": [c for d in status["domains"] for c in d["conflicts"]],
                          "health": [d["health"] for d in status["domains"]]}
                break
        if now() - start > args.limit:
            result = {"drained": False, "seconds": now() - start, "status": status}
            break
        time.sleep(2)
    try:
        metrics = get_json(server, "/.davgate/metrics").decode()
        result["server_5xx"] = [line for line in metrics.splitlines()
                                if line.startswith("davgate_requests_total") and 'status="5' in line]
    except TransportError as error:
        result["server_5xx"] = [f"metrics unavailable: {error}"]
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0 if result["drained"] else 1


# ------------------------------------------------------------------- verify
def cmd_verify(args):
    with open(args.state) as f:
        load = json.load(f)
    result = {"files_verified": 0, "bytes_verified": 0, "absent_verified": 0, "uncertain_resolved": 0,
              "mismatches": [], "extras": [], "apache_leftovers": []}
    for record in load["records"]:
        folder = os.path.join(args.root, record["folder"][len(args.prefix):].strip("/"))
        try:
            entries = set(os.listdir(folder))
        except OSError as error:
            result["mismatches"].append(f"{folder}: {error}")
            continue
        for name, possible in record["state"].items():
            path = os.path.join(folder, name)
            if name in entries:
                with open(path, "rb") as f:
                    data = f.read()
                actual = sha(data)
            else:
                actual = "absent"
            if actual not in possible:
                result["mismatches"].append(
                    f"{path}: upstream has {actual if actual == 'absent' else 'sha256 ' + actual[:16] + ', ' + str(len(data)) + ' bytes'}, "
                    f"the client last saw acknowledged {' or '.join(p if p == 'absent' else 'sha256 ' + p[:16] + ', ' + str(record['sizes'].get(p)) + ' bytes' for p in possible)}")
            elif len(possible) > 1:
                result["uncertain_resolved"] += 1
            elif actual == "absent":
                result["absent_verified"] += 1
            else:
                result["files_verified"] += 1
                result["bytes_verified"] += len(data)
        for name in sorted(entries - set(record["state"])):
            if name == ".DAV" or name.startswith(".davfs.tmp"):
                # Apache's own: property databases, and the temporary file of
                # a PUT its stop cut off.
                if name != ".DAV":
                    result["apache_leftovers"].append(os.path.join(folder, name))
                continue
            result["extras"].append(os.path.join(folder, name))
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0


# ------------------------------------------------------------------- report
def read_samples(path):
    samples = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 4 and parts[1] != "None":
                    samples.append((float(parts[0]), int(parts[1]), int(parts[2]), int(parts[3])))
    except OSError:
        pass
    return samples


def mib(kib):
    return f"{kib / 1024:.1f}"


def cmd_report(args):
    load = json.load(open(args.load))
    drain = json.load(open(args.drain)) if os.path.exists(args.drain) else {"drained": False}
    verify = json.load(open(args.verify)) if os.path.exists(args.verify) else None
    samples = read_samples(args.samples)
    restarts = []
    if args.restarts and os.path.exists(args.restarts):
        for line in open(args.restarts):
            parts = line.split()
            if len(parts) == 3:
                restarts.append(tuple(float(p) for p in parts))   # stop begins, stopped, answering again
    checks = []     # (name, ok, detail)

    def check(name, ok, detail):
        checks.append((name, ok, detail))

    start, end = load["start"], load["end"]
    seconds = end - start
    title = f"soak: {args.label}, {load['clients']} clients, {load['seconds'] / 60:g} min"
    print(f"\n{title}\n" + "=" * len(title))

    # Requests per method and status.
    counts = load["counts"]
    statuses = sorted({s for per in counts.values() for s in per}, key=lambda s: (not s.isdigit(), s))
    methods = [m for m in ("PUT", "GET", "PROPFIND", "LOCK", "UNLOCK", "MOVE", "DELETE") if m in counts]
    methods += [m for m in counts if m not in methods]
    header = f"{'method':<10}{'requests':>10}{'req/s':>8}  " + "".join(f"{s:>8}" for s in statuses)
    print(header)
    total = 0
    for m in methods:
        n = sum(counts[m].values())
        total += n
        print(f"{m:<10}{n:>10}{n / seconds:>8.1f}  " + "".join(f"{counts[m].get(s, 0):>8}" for s in statuses))
    print(f"{'all':<10}{total:>10}{total / seconds:>8.1f}  "
          + "".join(f"{sum(counts[m].get(s, 0) for m in methods):>8}" for s in statuses))
    c = load["counters"]
    print(f"load: {seconds:.0f} s; {c.get('bytes_sent', 0) / MiB:.0f} MiB sent, "
          f"{c.get('bytes_received', 0) / MiB:.0f} MiB received; {c.get('connections', 0)} connections opened, "
          f"{c.get('stale_connection_retries', 0)} requests resent on a closed keep-alive connection")

    # 5xx: explained by an upstream restart, or not.
    grace = args.grace
    explained, unexplained = [], []
    for e in load["events"]["5xx"]:
        why = None
        for (down, stopped, up) in restarts:
            if e["status"] == 503 and e["end"] >= down and e["start"] <= up + grace:
                why = f"503 within the restart window {down - start:.0f}-{up - start:.0f} s (+{grace:g} s)"
            elif e["status"] in (502, 504) and e["start"] <= stopped and e["end"] >= down:
                why = f"{e['status']}, in flight when the upstream was stopped at {down - start:.0f} s"
            if why:
                break
        (explained if why else unexplained).append((e, why))
    n5xx = load["counters"].get("events_5xx", 0)
    print(f"5xx answers: {n5xx}; explained by the upstream restarts: {len(explained)}; unexplained: {n5xx - len(explained)}")
    for (down, stopped, up) in restarts:
        inside = sum(1 for e, _ in explained if e["end"] >= down and e["start"] <= up + grace)
        print(f"   upstream restart: stopped {down - start:.1f}-{stopped - start:.1f} s, answering again at "
              f"{up - start:.1f} s: {inside} 5xx in that window")
    by = {}
    for e, _ in explained:
        by[(e["method"], e["status"])] = by.get((e["method"], e["status"]), 0) + 1
    if by:
        print("   explained: " + ", ".join(f"{m} {s} x{n}" for (m, s), n in sorted(by.items())))
    for e, _ in unexplained[:20]:
        print(f"   UNEXPLAINED {e['method']} {e['path']} -> {e['status']} at {e['start'] - start:.1f}-"
              f"{e['end'] - start:.1f} s: {e['body'][:200]!r}")
    check("no 5xx beyond the restarts", n5xx == len(explained), f"{n5xx - len(explained)} unexplained")
    for line in drain.get("server_5xx", []):
        print(f"   davgate's own count: {line}")

    # Answers other than expected, transport errors, read-back checks.
    ev = load["events"]
    for kind, label in (("unexpected", "answers other than the client's record predicts (non-5xx)"),
                        ("transport", "requests without an answer (connection errors)"),
                        ("get_mismatch", "GETs whose bytes differ from the last acknowledged PUT"),
                        ("listing_mismatch", "Depth 1 listings that differ from the record"),
                        ("size_mismatch", "Depth 0 getcontentlength different from the record")):
        n = c.get("events_" + kind, 0)
        check(label, n == 0, str(n))
        if not n:
            continue
        groups = {}
        for e in ev[kind]:
            key = (e.get("method", ""), str(e.get("status", "")), str(e.get("expected", "")), e.get("error", "")[:60])
            groups[key] = groups.get(key, 0) + 1
        print(f"   {kind}: {n} in all; by kind (of the first {len(ev[kind])} kept): "
              + "; ".join(f"{m} {s} (expected {x}) {err} x{k}".replace("  ", " ") for (m, s, x, err), k in groups.items()))
        for e in ev[kind][:8]:
            e = dict(e)
            for key in ("t", "start", "end"):
                if key in e:
                    e[key] = round(e[key] - start, 1)
            if "body" in e:
                e["body"] = e["body"][:160]
            print(f"   {kind}: {json.dumps(e)[:400]}")
    errors = [r["error"] for r in load["records"] if r["error"]]
    check("every client ran to the end", not errors and not c.get("clients_abandoned"),
          f"{len(errors)} crashed, {c.get('clients_abandoned', 0)} abandoned")
    print(f"verified while running: {c.get('gets_verified', 0)} GETs ({c.get('bytes_get_verified', 0) / MiB:.0f} MiB) "
          f"matched the last acknowledged PUT; {c.get('listings_checked', 0)} Depth 1 listings matched; "
          f"{c.get('paths_made_uncertain', 0)} paths left open by a 5xx or a lost answer")

    # Write-back drained, upstream byte for byte.
    if drain.get("drained"):
        print(f"write-back journal drained {drain['seconds']:.0f} s after the load; "
              f"{len(drain['failed'])} failed uploads, {len(drain['conflicts'])} conflict copies")
        for f in drain["failed"][:10]:
            print(f"   failed upload: {f}")
        for f in drain["conflicts"][:10]:
            print(f"   conflict: {f}")
    check("write-back journal drained", bool(drain.get("drained")), f"{drain.get('seconds', 0):.0f} s")
    check("no failed uploads, no conflict copies", drain.get("drained") and not drain["failed"] and not drain["conflicts"],
          f"{len(drain.get('failed', []))} failed, {len(drain.get('conflicts', []))} conflicts")
    if verify:
        print(f"upstream: {verify['files_verified']} files ({verify['bytes_verified'] / MiB:.1f} MiB) match the last "
              f"acknowledged PUT byte for byte (sha256); {verify['absent_verified']} deleted, moved away or never "
              f"written names absent; {verify['uncertain_resolved']} names left open by a 5xx in one of their "
              f"possible states; {c.get('puts_acknowledged', 0)} PUTs acknowledged in all "
              f"({c.get('bytes_acknowledged', 0) / MiB:.0f} MiB)")
        for m in verify["mismatches"][:20]:
            print(f"   MISMATCH {m}")
        for m in verify["extras"][:20]:
            print(f"   EXTRA {m}")
        for m in verify["apache_leftovers"][:5]:
            print(f"   Apache's leftover temporary file (not davgate's): {m}")
        check("every acknowledged write upstream, nothing deleted left",
              not verify["mismatches"] and not verify["extras"],
              f"{len(verify['mismatches'])} mismatches, {len(verify['extras'])} unexpected files")
    else:
        check("upstream verified", False, "no verification")

    # RSS curve.
    load_samples = [s for s in samples if start <= s[0] <= end]
    before = [s for s in samples if s[0] < start]
    after = [s for s in samples if s[0] > end]
    if load_samples:
        bucket = 30 if seconds >= 300 else 5
        print(f"\nRSS of davgate (VmRSS, sampled every second; MiB), one line per {bucket} s of load:")
        print(f"{'t (s)':>9} {'min':>7} {'max':>7} {'last':>7} {'fds':>5} {'threads':>7}")
        if before:
            print(f"{'idle':>9} {mib(min(s[1] for s in before)):>7} {mib(max(s[1] for s in before)):>7} "
                  f"{mib(before[-1][1]):>7} {before[-1][2]:>5} {before[-1][3]:>7}")
        top = max(s[1] for s in samples)
        t = start
        while t < end:
            chunk = [s for s in load_samples if t <= s[0] < t + bucket]
            if chunk:
                hi = max(s[1] for s in chunk)
                bar = "#" * max(1, round(40 * hi / top))
                print(f"{t - start:>4.0f}-{min(t + bucket, end) - start:<4.0f} {mib(min(s[1] for s in chunk)):>7} "
                      f"{mib(hi):>7} {mib(chunk[-1][1]):>7} {chunk[-1][2]:>5} {chunk[-1][3]:>7}  {bar}")
            t += bucket
        if after:
            print(f"{'after':>9} {mib(min(s[1] for s in after)):>7} {mib(max(s[1] for s in after)):>7} "
                  f"{mib(after[-1][1]):>7} {after[-1][2]:>5} {after[-1][3]:>7}  (drain and idle)")
        warm = [s[1] for s in load_samples if s[0] <= start + seconds / 3]
        late = [s[1] for s in load_samples if s[0] >= start + seconds / 2]
        base, last_half = max(warm or [0]), max(late or [0])
        tolerance = max(16 * 1024, 0.15 * base)
        flat = last_half <= base + tolerance
        print(f"RSS: idle {mib(before[-1][1]) if before else '?'} MiB, peak {mib(top)} MiB, end {mib(samples[-1][1])} MiB; "
              f"max in the first third (warm-up) {mib(base)} MiB, max over the last half {mib(last_half)} MiB "
              f"({(last_half - base) / 1024:+.1f} MiB); flat = within max(16 MiB, 15%) = {mib(tolerance)} MiB: "
              f"{'yes' if flat else 'NO'}")
        check("RSS flat after warm-up", flat, f"{(last_half - base) / 1024:+.1f} MiB, tolerance {mib(tolerance)} MiB")
    else:
        check("RSS sampled", False, "no samples")

    # File descriptors. The index is a GRDB DatabasePool, one writer and up
    # to 5 readers (GRDB's default), beside 8 lookup connections opened at
    # start (LookupConnections), each holding index.sqlite and its -wal,
    # plus the -shm: at most 29, a bounded set whose readers open as load
    # comes. Everything else must come back to its idle count.
    index_bound = 2 * (1 + 5 + 8) + 1
    fds_before = json.load(open(args.fds_before))
    fds_after = json.load(open(args.fds_after))

    def index_fds(f):
        return sum(1 for path in f["files"] if os.path.basename(path).startswith("index.sqlite"))

    growth = fds_after["total"] - fds_before["total"]
    other_growth = growth - (index_fds(fds_after) - index_fds(fds_before))
    print(f"file descriptors: {fds_before['total']} idle after start-up {fds_before['kinds']}, "
          f"{fds_after['total']} after the load, drained and idle {fds_after['kinds']} ({growth:+d}); "
          f"of them the index's pool {index_fds(fds_before)} -> {index_fds(fds_after)} (bound {index_bound}), "
          f"all others {other_growth:+d}")
    if other_growth > args.fd_tolerance:
        for path in sorted(set(fds_after["files"]) - set(fds_before["files"]))[:20]:
            print(f"   open after, not before: {path}")
    check("no file descriptors leaked", other_growth <= args.fd_tolerance and index_fds(fds_after) <= index_bound,
          f"{growth:+d} in all, index pool {index_fds(fds_after)} of at most {index_bound}, others {other_growth:+d} "
          f"(tolerance {args.fd_tolerance})")

    print(f"\nchecks ({args.label}):")
    for name, ok, detail in checks:
        print(f"   {'pass' if ok else 'FAIL'}  {name} ({detail})")
    failed = sum(1 for _, ok, _ in checks if not ok)
    print(f"{args.label}: {len(checks) - failed} passed, {failed} failed")
    summary = {"label": args.label, "requests": total, "rate": total / seconds, "counts": counts,
               "checks": [{"name": n, "ok": bool(o), "detail": d} for n, o, d in checks]}
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def server_options(p):
        p.add_argument("--url", required=True, help="https://127.0.0.1:PORT/DOMAIN/")
        p.add_argument("--user", default="admin")
        p.add_argument("--ca", help="PEM to trust (default: no verification, loopback only)")
        p.add_argument("--timeout", type=float, default=120, help="socket timeout per request, s")

    p = sub.add_parser("sample"); p.add_argument("pid", type=int); p.add_argument("out")
    p = sub.add_parser("fds"); p.add_argument("pid", type=int)
    p = sub.add_parser("setup"); server_options(p); p.add_argument("--clients", type=int, default=64)
    p = sub.add_parser("load"); server_options(p)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--max-size", type=int, default=MiB)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--progress", type=float, default=30, help="seconds between progress lines")
    p.add_argument("--grace", type=float, default=300, help="seconds clients may take to finish after the end")
    p.add_argument("--out", required=True)
    p.add_argument("--ops", help="write every request of every client here (TSV)")
    p = sub.add_parser("drain"); server_options(p)
    p.add_argument("--limit", type=float, default=600); p.add_argument("--out", required=True)
    p = sub.add_parser("verify")
    p.add_argument("--state", required=True); p.add_argument("--root", required=True)
    p.add_argument("--prefix", required=True, help="the URL path that ROOT holds, e.g. /files/")
    p.add_argument("--out", required=True)
    p = sub.add_parser("report")
    p.add_argument("--label", required=True)
    for name in ("load", "drain", "verify", "samples", "fds-before", "fds-after"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--restarts")
    p.add_argument("--grace", type=float, default=10, help="seconds after the upstream answers again in which 503s count as the restart's")
    p.add_argument("--fd-tolerance", type=int, default=2)
    p.add_argument("--summary")
    args = parser.parse_args()
    return {"sample": cmd_sample, "fds": cmd_fds, "setup": cmd_setup, "load": cmd_load, "drain": cmd_drain,
            "verify": cmd_verify, "report": cmd_report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
