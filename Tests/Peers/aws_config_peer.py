"""A real AWS Secrets Manager and Systems Manager Parameter Store for Imago's tests: moto in
server mode on 127.0.0.1, with signature checks on.

Usage: aws_config_peer.py SPEC.json, where the spec is {"secrets": {NAME: [TEXT, ...]},
"parameters": {NAME: VALUE}}: each secret is made with its first text, then each later text is put
as a new version (so the last is AWSCURRENT and the one before AWSPREVIOUS); each parameter is a
String. Prints one JSON line (port, access key, secret, each secret's version IDs in order) once
ready, then serves until its standard input closes (the test ends).
"""
import json
import os
import sys

with open(sys.argv[1]) as f:
    spec = json.load(f)
secrets = spec.get("secrets", {})
parameters = spec.get("parameters", {})

# Authentication is checked once the setup below is done: moto lets this many requests through
# unchecked (three for the IAM user, one per secret version, one per parameter).
SETUP_REQUESTS = 3 + sum(len(texts) for texts in secrets.values()) + len(parameters)
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_REQUESTS)

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
port = server._server.server_port
endpoint = f"http://127.0.0.1:{port}"
setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")

iam = boto3.client("iam", **setup)
iam.create_user(UserName="imago")
actions = ["secretsmanager:GetSecretValue", "ssm:GetParametersByPath"]
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
iam.put_user_policy(UserName="imago", PolicyName="configuration", PolicyDocument=json.dumps(policy))
key = iam.create_access_key(UserName="imago")["AccessKey"]

manager = boto3.client("secretsmanager", **setup)
versions = {}
for name, texts in secrets.items():
    versions[name] = [manager.create_secret(Name=name, SecretString=texts[0])["VersionId"]]
    for text in texts[1:]:
        versions[name].append(manager.put_secret_value(SecretId=name, SecretString=text)["VersionId"])

ssm = boto3.client("ssm", **setup)
for name, value in parameters.items():
    ssm.put_parameter(Name=name, Value=value, Type="String")

print(json.dumps({"port": port, "accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"], "versions": versions}), flush=True)
sys.stdin.read()
server.stop()
