#!/usr/bin/env python3
"""Signs requests with botocore's own S3 signer (botocore.auth.S3SigV4Auth),
the reference S3SignerTests holds davgate's S3Signer to.

Reads one JSON document on stdin:
  {"accessKeyID": ..., "secret": ..., "region": ..., "date": "20261125T141500Z",
   "requests": [{"method": "GET",
                 "url": "http://host/bucket/encoded%20path?the=query&as=sent",
                 "query": [["name", "value or null for a bare flag"], ...],
                 "headers": [["Name", "value"], ...],
                 "body": "base64 of the body, or absent for none",
                 "unsignedPayload": false}]}
and prints a JSON list, one entry per request:
  {"fromQuery": Authorization with the query given decoded (botocore encodes it),
   "fromURL": Authorization with the query taken from the URL as sent (what a
              server sees), "payloadHash": botocore's x-amz-content-sha256,
   "canonicalRequest": botocore's, for the failure message}.

botocore decides the payload hash itself: the SHA-256 of the body, or
UNSIGNED-PAYLOAD when the client turns payload signing off (the
`payload_signing_enabled` S3 setting, what `unsignedPayload` sets). It signs
every header given except its blacklist (user-agent, expect, connection and
their kin), so the tests give it none of those.
"""
import base64
import datetime
import json
import sys
from unittest import mock

import botocore.auth
import botocore.config
import botocore.credentials
from botocore.awsrequest import AWSRequest


class RecordingSigner(botocore.auth.S3SigV4Auth):
    """botocore's S3 signer, keeping the canonical request it signed."""

    def canonical_request(self, request):
        self.signed_canonical_request = super().canonical_request(request)
        return self.signed_canonical_request


def sign(spec, request, with_query):
    url = request["url"] if not with_query else request["url"].split("?", 1)[0]
    body = base64.b64decode(request["body"]) if request.get("body") is not None else b""
    aws = AWSRequest(method=request["method"], url=url, data=body,
                     params=[(name, "" if value is None else value) for name, value in request["query"]] if with_query else None)
    for name, value in request["headers"]:
        aws.headers[name] = value  # an HTTPMessage: a repeated name is kept twice
    if request.get("unsignedPayload"):
        aws.context["client_config"] = botocore.config.Config(s3={"payload_signing_enabled": False})
    credentials = botocore.credentials.Credentials(spec["accessKeyID"], spec["secret"])
    signer = RecordingSigner(credentials, "s3", spec["region"])
    moment = datetime.datetime.strptime(spec["date"], botocore.auth.SIGV4_TIMESTAMP)
    with mock.patch("botocore.auth.get_current_datetime", return_value=moment):
        signer.add_auth(aws)
    return aws.headers["Authorization"], aws.headers["X-Amz-Content-SHA256"], signer.signed_canonical_request


def main():
    spec = json.load(sys.stdin)
    answers = []
    for request in spec["requests"]:
        from_query, payload_hash, canonical = sign(spec, request, with_query=True)
        from_url, _, _ = sign(spec, request, with_query=False)
        answers.append({"fromQuery": from_query, "fromURL": from_url, "payloadHash": payload_hash,
                        "canonicalRequest": canonical})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
