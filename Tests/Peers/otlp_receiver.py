"""An OTLP/HTTP receiver for Imago's tests, decoding with OpenTelemetry's own message definitions
(the `opentelemetry-proto` package): POST /v1/traces, /v1/metrics and /v1/logs, as protobuf
(`application/x-protobuf`) or JSON (`application/json`), gzip or not, as a collector takes them.
A body that does not parse is answered 400 and not recorded.

Usage: otlp_receiver.py OUTPUT [CERT KEY [CLIENT_CA]]
OUTPUT `-` answers every export at once, unread, as a sink for benchmarks (Benchmarks/tracing_cost.py).
With CERT and KEY it takes HTTPS only; with CLIENT_CA, only clients showing a certificate it signed.
Prints one JSON line ({"port": N}), then appends one JSON line per export to OUTPUT
({"signal": "traces", "contentType": ..., "message": the request in OTLP's JSON, ids in hex}),
until its standard input closes.
"""
import base64
import gzip
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

SIGNALS = {
    "/v1/traces": ("traces", trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": ("metrics", metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
    "/v1/logs": ("logs", logs_service_pb2.ExportLogsServiceRequest, logs_service_pb2.ExportLogsServiceResponse),
}
ID_FIELDS = {"traceId", "spanId", "parentSpanId"}
output_path = sys.argv[1]


def convert_ids(value, convert):
    """OTLP's JSON writes trace and span ids in hex where protobuf's JSON mapping has base64."""
    if isinstance(value, dict):
        return {key: convert(item) if key in ID_FIELDS and isinstance(item, str) else convert_ids(item, convert) for key, item in value.items()}
    if isinstance(value, list):
        return [convert_ids(item, convert) for item in value]
    return value


def hex_to_base64(text):
    return base64.b64encode(bytes.fromhex(text)).decode()


def base64_to_hex(text):
    return base64.b64decode(text).hex()
lock = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        route = SIGNALS.get(self.path)
        if route is None:
            self.send_error(404)
            return
        signal, request_type, response_type = route
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if output_path == "-":
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip()
        message = request_type()
        try:
            if content_type == "application/json":
                json_format.ParseDict(convert_ids(json.loads(body), hex_to_base64), message)
            else:
                message.ParseFromString(body)
        except Exception as error:  # a malformed export: the collector's 400
            self.send_error(400, str(error))
            return
        with lock, open(output_path, "a") as output:
            output.write(json.dumps({"signal": signal, "contentType": content_type, "message": convert_ids(json_format.MessageToDict(message), base64_to_hex)}) + "\n")
        answer = response_type()
        if content_type == "application/json":
            reply, reply_type = json_format.MessageToJson(answer).encode(), "application/json"
        else:
            reply, reply_type = answer.SerializeToString(), "application/x-protobuf"
        self.send_response(200)
        self.send_header("Content-Type", reply_type)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
if len(sys.argv) >= 4:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 5:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(sys.argv[4])
    server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"port": server.server_address[1]}), flush=True)
sys.stdin.read()
server.shutdown()
