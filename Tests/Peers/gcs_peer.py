"""A GCS JSON API for Imago's tests: gcp-storage-emulator on 127.0.0.1 behind a front that checks
OAuth, since the emulator checks none. The front has a token endpoint that verifies the service
account's JWT (RS256 over its public key, issuer, audience, scope, expiry, with `cryptography`)
before it issues a token, and passes a GET to the emulator only with an issued token (else GCS's 401).
A media upload (POST /upload/storage/v1/b/B/o?uploadType=media&name=N) and a DELETE pass only with a
token of the read_write scope (else GCS's 403). The emulator ignores `ifGenerationMatch`; GCS makes
`ifGenerationMatch=0` (create only if absent) atomic, so the front serves uploads one at a time and
answers GCS's 412 itself when the object is there.

Usage: gcs_peer.py BUCKET=FILE[,FILE...] ...
Prints one JSON line (port, the service account key file's JSON, the same account with another
key, each object's generation), then
serves until its standard input closes.
"""
import base64
import json
import os
import secrets
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from gcp_storage_emulator.server import create_server

emulator = create_server("127.0.0.1", 0, in_memory=True)
emulator.start()
storage = f"http://127.0.0.1:{emulator._api._httpd.server_port}"

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
email = "imago-test@imago-tests.iam.gserviceaccount.com"
issued = {}  # token -> scope
token_requests = [0]
lock = threading.Lock()
uploads = threading.Lock()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify(assertion, audience):
    head, claims, signature = assertion.split(".")
    header = json.loads(unb64(head))
    if header.get("alg") != "RS256":
        return False
    key.public_key().verify(unb64(signature), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    body = json.loads(unb64(claims))
    now = time.time()
    return (
        body.get("iss") == email
        and body.get("aud") == audience
        and body.get("scope", "").split("/")[-1] in ("devstorage.read_only", "devstorage.read_write")
        and body.get("iat", 0) <= now + 60
        and body.get("exp", 0) > now
    )


class Front(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def scope(self):
        authorization = self.headers.get("Authorization", "")
        with lock:
            return issued.get(authorization[7:]) if authorization.startswith("Bearer ") else None

    def refuse(self, status, message, reason):
        error = {"error": {"code": status, "message": message, "errors": [{"reason": reason}]}}
        self.answer(status, json.dumps(error).encode(), [("Content-Type", "application/json")])

    def forward(self, method, body=None):
        request = urllib.request.Request(storage + self.path, body, {"Content-Type": "application/octet-stream"} if body is not None else {}, method=method)
        try:
            with urllib.request.urlopen(request) as response:
                status, headers, answer = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, answer = error.code, error.headers, error.read()
        self.answer(status, answer, [(n, v) for n, v in headers.items() if n.lower() in ("content-type", "etag", "last-modified", "cache-control")])

    def writable(self):
        scope = self.scope()
        if scope is None:
            self.refuse(401, "Invalid Credentials", "authError")
            return False
        if not scope.endswith("devstorage.read_write"):
            self.refuse(403, "Insufficient Permission", "insufficientPermissions")
            return False
        return True

    def do_DELETE(self):
        if self.writable():
            self.forward("DELETE")

    def do_POST(self):
        if self.path.startswith("/upload/storage/v1/b/"):
            if not self.writable():
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            bucket = url.path.split("/")[5]
            with uploads:
                if query.get("ifGenerationMatch") == ["0"]:
                    name = urllib.parse.quote(query.get("name", [""])[0], safe="")
                    try:
                        urllib.request.urlopen(f"{storage}/storage/v1/b/{bucket}/o/{name}").read()
                        return self.refuse(412, "At least one of the pre-conditions you specified did not hold.", "conditionNotMet")
                    except urllib.error.HTTPError as error:
                        if error.code != 404:
                            raise
                return self.forward("POST", body)
        if self.path != "/token":
            return self.answer(404, b"")
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
        with lock:
            token_requests[0] += 1
        try:
            good = form.get("grant_type") == ["urn:ietf:params:oauth:grant-type:jwt-bearer"] and verify(form["assertion"][0], token_uri)
        except Exception:
            good = False
        if not good:
            return self.answer(400, json.dumps({"error": "invalid_grant"}).encode(), [("Content-Type", "application/json")])
        token = "ya29." + secrets.token_urlsafe(24)
        scope = json.loads(unb64(form["assertion"][0].split(".")[1]))["scope"]
        with lock:
            issued[token] = scope
        self.answer(200, json.dumps({"access_token": token, "expires_in": 3599, "token_type": "Bearer"}).encode(), [("Content-Type", "application/json")])

    def do_GET(self):
        if self.path == "/_peer/token-requests":
            return self.answer(200, str(token_requests[0]).encode())
        if self.scope() is None:
            return self.refuse(401, "Invalid Credentials", "authError")
        self.forward("GET")


front = ThreadingHTTPServer(("127.0.0.1", 0), Front)
port = front.server_address[1]
token_uri = f"http://127.0.0.1:{port}/token"
threading.Thread(target=front.serve_forever, daemon=True).start()

generations = {}
for argument in sys.argv[1:]:
    bucket, files = argument.split("=", 1)
    request = urllib.request.Request(f"{storage}/storage/v1/b", json.dumps({"name": bucket}).encode(), {"Content-Type": "application/json"})
    urllib.request.urlopen(request).read()
    for path in filter(None, files.split(",")):
        name = os.path.basename(path)
        with open(path, "rb") as f:
            url = f"{storage}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={urllib.parse.quote(name, safe='')}"
            answer = json.loads(urllib.request.urlopen(urllib.request.Request(url, f.read(), {"Content-Type": "application/octet-stream"})).read())
        generations[f"{bucket}/{name}"] = answer.get("generation")

pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
account = {
    "type": "service_account", "project_id": "imago-tests", "private_key_id": "0123456789abcdef", "private_key": pem,
    "client_email": email, "client_id": "1", "token_uri": token_uri,
}
other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
impostor = dict(account, private_key=other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode())
print(json.dumps({"port": port, "key": json.dumps(account), "wrongKey": json.dumps(impostor), "generations": generations}), flush=True)
sys.stdin.read()
front.shutdown()
emulator.stop()
