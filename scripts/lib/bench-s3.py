#!/usr/bin/env python3
"""scripts/lib/bench-s3.py: the S3 side of scripts/bench --s3, one
subcommand each; see the top of scripts/bench. boto3 signs (presigned URLs,
Signature Version 4) and uploads; the timed reads go through python3's
http.client or curl, the clients the gateways are read with, so the direct
figures carry no SDK overhead the gateways' do not.

The S3 server comes from the environment: BENCH_S3_ENDPOINT
(http://127.0.0.1:PORT), BENCH_S3_BUCKET, BENCH_S3_KEY_ID, BENCH_S3_SECRET.

  presign KEY             a presigned GET URL of KEY, valid for an hour
  prime                   lists the whole bucket without a delimiter (untimed
                          by the bench): `rclone serve s3` computes each
                          object's MD5 ETag on first sight; prints the keys
                          and seconds
  list PREFIX             ListObjectsV2 of PREFIX with the delimiter `/`,
                          pages of the default 1,000, each a presigned URL
                          read on one kept-alive connection, the continuation
                          token taken from the page; prints seconds, keys
                          and pages
  get-latency FOLDER PREFIX
                          ListObjectsV2 of PREFIX (untimed), then a GET of
                          PREFIX + each file name of the local FOLDER through
                          presigned URLs on one kept-alive connection, each
                          checked against the local file; prints median, p90,
                          max (ms) and the connections opened, as bench.py's
                          get-latency does
  put-stored SIZE KEY -- COMMAND...
                          runs COMMAND (a curl -T through a gateway that
                          prints its status), then HEADs KEY every 50 ms
                          until it answers with Content-Length SIZE (up to
                          600 s); prints the status, the seconds until
                          COMMAND returned and until the HEAD showed the
                          object, both from COMMAND's start, and the
                          seconds of the HEAD that showed it
  put-stored SIZE KEY --direct FILE
                          the same for boto3's upload_file of FILE (a
                          multipart upload, boto3's defaults: 8 MiB parts, 10
                          threads); the status printed is 200
  put-many PREFIX COUNT PROCESSES
                          COUNT distinct 4 KiB objects PREFIX-NNNNN.bin, put
                          with boto3's put_object from PROCESSES processes (a
                          client each); prints objects/s and seconds
  wait-keys PREFIX COUNT START
                          lists PREFIX (no delimiter) every 100 ms until it
                          holds COUNT keys (up to 600 s); prints the seconds
                          from START (a Unix time) until the listing that
                          showed them all was asked for
  head KEY                the object's size and ETag, or "absent"
"""

import http.client
import re
import statistics
import subprocess
import math
import os
import sys
import time
from urllib.parse import urlsplit

import boto3
from botocore.config import Config

import bench                                   # scripts/lib/bench.py: run_workers

ENDPOINT = os.environ["BENCH_S3_ENDPOINT"]
BUCKET = os.environ["BENCH_S3_BUCKET"]


def _client():
    return boto3.client(
        "s3", endpoint_url=ENDPOINT, region_name="us-east-1",
        aws_access_key_id=os.environ["BENCH_S3_KEY_ID"],
        aws_secret_access_key=os.environ["BENCH_S3_SECRET"],
        # rclone serve s3 takes Signature Version 4 only; path style as davgate's path_style = true.
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"},
                      retries={"max_attempts": 2, "mode": "standard"}))


def _connection(counter=None):
    url = urlsplit(ENDPOINT)

    class Counted(http.client.HTTPConnection):
        def connect(self):
            if counter is not None:
                counter.append(1)
            super().connect()

    return Counted(url.hostname, url.port, timeout=120)


def _path(url):
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def presign(key):
    print(_client().generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=3600))


def prime():
    start = time.perf_counter()
    keys = 0
    for page in _client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        keys += len(page.get("Contents", []))
    print(f"{keys} {time.perf_counter() - start:.2f}")


_TOKEN = re.compile(rb"<NextContinuationToken>([^<]*)</NextContinuationToken>")


def _list_pages(s3, conn, prefix):
    """Yields each page's body; signing each page's URL (tens of microseconds) is inside the timing."""
    token = None
    while True:
        params = {"Bucket": BUCKET, "Prefix": prefix, "Delimiter": "/"}
        if token:
            params["ContinuationToken"] = token
        conn.request("GET", _path(s3.generate_presigned_url("list_objects_v2", Params=params, ExpiresIn=3600)))
        answer = conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            sys.exit(f"ListObjectsV2 of {prefix} answered {answer.status}: {body[:200]!r}")
        yield body
        found = _TOKEN.search(body)
        if not found:
            return
        # The token comes XML-escaped in the page and goes unescaped into the query.
        token = found.group(1).decode().replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">") \
            .replace("&quot;", '"').replace("&apos;", "'")


def list_prefix(prefix):
    s3 = _client()
    s3.generate_presigned_url("list_objects_v2", Params={"Bucket": BUCKET}, ExpiresIn=60)   # loads boto3's models
    conn = _connection()
    keys = pages = 0
    start = time.perf_counter()
    for body in _list_pages(s3, conn, prefix):
        keys += body.count(b"<Key>")
        pages += 1
    seconds = time.perf_counter() - start
    conn.close()
    print(f"{seconds:.3f} {keys} {pages}")


def get_latency(local, prefix):
    s3 = _client()
    opened = []
    conn = _connection(opened)
    for _ in _list_pages(s3, conn, prefix):
        pass
    names = sorted(os.listdir(local))
    urls = [_path(s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": prefix + name}, ExpiresIn=3600))
            for name in names]
    times = []
    for name, url in zip(names, urls):
        with open(os.path.join(local, name), "rb") as f:
            expected = f.read()
        start = time.perf_counter()
        conn.request("GET", url)
        answer = conn.getresponse()
        got = answer.read()
        times.append((time.perf_counter() - start) * 1000)
        if answer.status != 200 or got != expected:
            sys.exit(f"GET {prefix}{name} answered {answer.status} with {len(got)} bytes, not the file's {len(expected)}")
    times.sort()
    p90 = times[math.ceil(0.9 * len(times)) - 1]
    print(f"{statistics.median(times):.2f} {p90:.2f} {times[-1]:.2f} {len(opened)}")


def put_stored(size, key, *how):
    size = int(size)
    s3 = _client()
    s3.head_bucket(Bucket=BUCKET)            # connects and loads boto3's models before the clock starts
    start = time.perf_counter()
    if how[0] == "--direct":
        from boto3.s3.transfer import TransferConfig
        s3.upload_file(how[1], BUCKET, key, Config=TransferConfig())
        status = "200"
    elif how[0] == "--":
        status = subprocess.run(how[1:], stdout=subprocess.PIPE, text=True, check=False).stdout.strip() or "none"
        if status not in ("200", "201", "204"):
            print(f"{status} 0 0 0")
            return
    else:
        sys.exit("put-stored SIZE KEY -- COMMAND... | --direct FILE")
    answered = time.perf_counter() - start
    deadline = start + 600
    while True:
        asked = time.perf_counter()
        try:
            head = s3.head_object(Bucket=BUCKET, Key=key)
            if head["ContentLength"] == size:
                break
        except s3.exceptions.ClientError as error:
            if error.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
                raise
        if time.perf_counter() > deadline:
            sys.exit(f"{key} not stored with {size} bytes within 600 s")
        time.sleep(0.05)
    stored = time.perf_counter()
    print(f"{status} {answered:.3f} {stored - start:.3f} {stored - asked:.3f}")


def put_many(prefix, count, processes):
    count = int(count)

    def work(first, last, ready):
        s3 = _client()
        body = bytearray(os.urandom(4096))
        s3.head_bucket(Bucket=BUCKET)                     # connected and signed once before the start
        ready()
        for i in range(first, last):
            body[:8] = i.to_bytes(8, "big")               # distinct content per object
            s3.put_object(Bucket=BUCKET, Key=f"{prefix}-{i:05d}.bin", Body=bytes(body))

    seconds = bench.run_workers(count, int(processes), work, "put_object")
    print(f"{count / seconds:.0f} {seconds:.3f}")


def wait_keys(prefix, count, start):
    s3, count, start = _client(), int(count), float(start)
    while True:
        asked = time.time()
        keys = sum(len(page.get("Contents", []))
                   for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix))
        if keys >= count:
            print(f"{asked - start:.3f}")
            return
        if asked - start > 600:
            sys.exit(f"{prefix}: {keys} of {count} keys after 600 s")
        time.sleep(0.1)


def head(key):
    try:
        answer = _client().head_object(Bucket=BUCKET, Key=key)
        print(answer["ContentLength"], answer["ETag"])
    except Exception:           # noqa: BLE001 - any failure is "not there" to the caller
        print("absent")


COMMANDS = {
    "presign": presign,
    "prime": prime,
    "list": list_prefix,
    "get-latency": get_latency,
    "put-stored": put_stored,
    "put-many": put_many,
    "wait-keys": wait_keys,
    "head": head,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
