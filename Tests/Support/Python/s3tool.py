#!/usr/bin/env python3
"""Looks at an S3 bucket through the S3 server itself, not through davgate.

The tests use it to check what a store really wrote (keys, sizes, ETags,
bytes, multipart uploads left behind) and to put objects behind davgate's
back. boto3, path-style addressing (the test servers have no DNS names for
buckets), no retries (a test must see the server's first answer).

Settings come from the options or, when absent, from the environment:
  --endpoint   AWS_ENDPOINT_URL        http://127.0.0.1:PORT
  --access-key AWS_ACCESS_KEY_ID
  --secret     AWS_SECRET_ACCESS_KEY
  --region     AWS_DEFAULT_REGION      us-east-1 when neither is set
  --bucket     S3TOOL_BUCKET

Commands (text output is tab-separated, one line each; --json prints one
JSON document instead):
  list [--prefix P]      every key below the prefix, recursively: key, size, ETag
  get KEY [FILE]         the object's bytes to FILE, or to stdout
  put KEY FILE           FILE's bytes (`-` for stdin) as the object; prints its ETag
  delete KEY             removes the object (no error when it is missing)
  uploads                multipart uploads in progress: key, upload id (rclone
                         serve s3 forgets them when it restarts)
  mkbucket               creates the bucket
Exit status 0, or 1 with the server's error on stderr.
"""
import argparse
import json
import os
import sys

import boto3
import botocore.config
import botocore.exceptions


def client(options):
    endpoint = options.endpoint or os.environ.get("AWS_ENDPOINT_URL")
    if not endpoint:
        sys.exit("s3tool: no endpoint (--endpoint or AWS_ENDPOINT_URL)")
    config = botocore.config.Config(
        s3={"addressing_style": "path"},
        retries={"total_max_attempts": 1},
        # Checksums on every request (botocore's default since 1.36) are
        # more than the test servers need, and rclone's older kin refuse them.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        connect_timeout=5,
        read_timeout=60,
    )
    return boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=options.access_key or os.environ.get("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key=options.secret or os.environ.get("AWS_SECRET_ACCESS_KEY"),
        region_name=options.region or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
        config=config,
    )


def bucket_of(options):
    bucket = options.bucket or os.environ.get("S3TOOL_BUCKET")
    if not bucket:
        sys.exit("s3tool: no bucket (--bucket or S3TOOL_BUCKET)")
    return bucket


def emit(options, rows, columns):
    if options.json:
        json.dump([dict(zip(columns, row)) for row in rows], sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        for row in rows:
            print("\t".join(str(value) for value in row))


def list_keys(s3, options):
    rows = []
    paginator = s3.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket_of(options), Prefix=options.prefix):
        for item in page.get("Contents", []):
            rows.append((item["Key"], item["Size"], item.get("ETag", "")))
    emit(options, rows, ("key", "size", "etag"))


def get(s3, options):
    body = s3.get_object(Bucket=bucket_of(options), Key=options.key)["Body"]
    out = open(options.file, "wb") if options.file else sys.stdout.buffer
    try:
        for chunk in iter(lambda: body.read(1 << 16), b""):
            out.write(chunk)
    finally:
        if options.file:
            out.close()


def put(s3, options):
    data = sys.stdin.buffer.read() if options.file == "-" else open(options.file, "rb").read()
    answer = s3.put_object(Bucket=bucket_of(options), Key=options.key, Body=data)
    print(answer.get("ETag", ""))


def delete(s3, options):
    s3.delete_object(Bucket=bucket_of(options), Key=options.key)


def uploads(s3, options):
    rows = []
    paginator = s3.get_paginator("list_multipart_uploads")
    try:
        for page in paginator.paginate(Bucket=bucket_of(options)):
            for upload in page.get("Uploads", []):
                rows.append((upload["Key"], upload["UploadId"]))
    except botocore.exceptions.ClientError as error:
        # rclone serve s3 (1.75) answers NoSuchUpload when no upload is in
        # progress, where S3 lists none.
        if error.response.get("Error", {}).get("Code") != "NoSuchUpload" or rows:
            raise
    emit(options, rows, ("key", "uploadId"))


def mkbucket(s3, options):
    s3.create_bucket(Bucket=bucket_of(options))


def main():
    parser = argparse.ArgumentParser(description="Looks at an S3 bucket through the S3 server itself.")
    parser.add_argument("--endpoint")
    parser.add_argument("--access-key")
    parser.add_argument("--secret")
    parser.add_argument("--region")
    parser.add_argument("--bucket")
    parser.add_argument("--json", action="store_true")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list")
    listing.add_argument("--prefix", default="")
    listing.set_defaults(run=list_keys)
    getting = commands.add_parser("get")
    getting.add_argument("key")
    getting.add_argument("file", nargs="?")
    getting.set_defaults(run=get)
    putting = commands.add_parser("put")
    putting.add_argument("key")
    putting.add_argument("file")
    putting.set_defaults(run=put)
    deleting = commands.add_parser("delete")
    deleting.add_argument("key")
    deleting.set_defaults(run=delete)
    commands.add_parser("uploads").set_defaults(run=uploads)
    commands.add_parser("mkbucket").set_defaults(run=mkbucket)
    options = parser.parse_args()
    try:
        options.run(client(options), options)
    except botocore.exceptions.ClientError as error:
        sys.exit(f"s3tool: {error}")
    except botocore.exceptions.BotoCoreError as error:
        sys.exit(f"s3tool: {error}")


if __name__ == "__main__":
    main()
