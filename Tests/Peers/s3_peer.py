"""A real S3 API server for Imago's tests: moto in server mode on 127.0.0.1, with signature checks on.

Usage: s3_peer.py BUCKET=FILE[,FILE...] ...  (each file uploaded under its base name)
Also makes a role, `reader`, that may read S3, and a second user, `assumer`, that may only assume
it (STS AssumeRole, as imgproxy's IMGPROXY_S3_ASSUME_ROLE_ARN does).
Prints one JSON line (port, access key, secret, versions of each key, the role's ARN, the assumer's
key) once ready, then serves
until its standard input closes (the test ends), so it never outlives the test.
"""
import json
import os
import sys

# Authentication is checked once the setup below is done: moto lets this many requests through
# unchecked (three for the IAM user, three for the assumer, two for the role, two per bucket, one
# per file).
SETUP_REQUESTS = 3 + 3 + 2 + sum(2 + len(argument.split("=", 1)[1].split(",")) for argument in sys.argv[1:])
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_REQUESTS)

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()


def exclusive_creates(app):
    """S3 lets exactly one of two concurrent `PUT`s with `If-None-Match: *` create an object (the
    other gets 412); moto checks and then stores on its request threads, so two can both succeed.
    Conditional `PUT`s are served one at a time here, which gives S3's guarantee."""
    import threading
    lock = threading.Lock()

    def serve(environ, start_response):
        if environ.get("REQUEST_METHOD") == "PUT" and environ.get("HTTP_IF_NONE_MATCH") == "*":
            with lock:
                return list(app(environ, start_response))
        return app(environ, start_response)
    return serve


server._server.app = exclusive_creates(server._server.app)
port = server._server.server_port
endpoint = f"http://127.0.0.1:{port}"
setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")

iam = boto3.client("iam", **setup)
iam.create_user(UserName="imago")
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.put_user_policy(UserName="imago", PolicyName="s3", PolicyDocument=json.dumps(policy))
key = iam.create_access_key(UserName="imago")["AccessKey"]

iam.create_user(UserName="assumer")
assume = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]}
iam.put_user_policy(UserName="assumer", PolicyName="assume", PolicyDocument=json.dumps(assume))
assumer = iam.create_access_key(UserName="assumer")["AccessKey"]
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
iam.put_role_policy(RoleName="reader", PolicyName="s3", PolicyDocument=json.dumps(policy))

s3 = boto3.client("s3", **setup)
versions = {}
for argument in sys.argv[1:]:
    bucket, files = argument.split("=", 1)
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    for path in filter(None, files.split(",")):
        name = os.path.basename(path)
        with open(path, "rb") as f:
            answer = s3.put_object(Bucket=bucket, Key=name, Body=f.read())
        versions[f"{bucket}/{name}"] = answer.get("VersionId")

print(json.dumps({
    "port": port, "accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"], "versions": versions,
    "roleARN": role["Arn"], "assumerKeyID": assumer["AccessKeyId"], "assumerSecret": assumer["SecretAccessKey"],
}), flush=True)
sys.stdin.read()
server.stop()
