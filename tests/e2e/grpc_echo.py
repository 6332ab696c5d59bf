"""A gRPC echo server (and client) for the credential broker's tests
(Debian python3-grpcio; raw bytes, no protobuf):

    python3 grpc_echo.py serve --record FILE --cert PEM --key KEY [--port 443]
    python3 grpc_echo.py call HOST:PORT unary|stream TOKEN

The service moat.Echo has Unary (one answer) and Stream (three answers).
Each answer is the request's "authorization" metadata value, a space and
the request's bytes; the value is also in the initial metadata and in
the trailing metadata (x-echo). Each call is one JSON line in FILE:
{"method": ..., "metadata": [[k, v], ...], "request": ...}.

The client sends "authorization: Bearer TOKEN" and the request "ping",
over TLS with the default roots (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH), and
prints each answer, the initial and the trailing metadata, one line each.
The server prints "ready" when it listens.
"""
import json
import sys
import threading
import time
from concurrent import futures

import grpc

lock = threading.Lock()


def serve(record, cert, key, port):
    def log(method, ctx, req):
        md = [[k, v] for k, v in ctx.invocation_metadata()]
        with lock, open(record, "a") as f:
            f.write(json.dumps({"method": method, "metadata": md,
                                "request": req.decode("latin-1")}) + "\n")
        return dict(ctx.invocation_metadata()).get("authorization", "")

    def unary(req, ctx):
        auth = log("Unary", ctx, req)
        ctx.send_initial_metadata((("x-echo", auth),))
        ctx.set_trailing_metadata((("x-echo", auth),))
        return auth.encode() + b" " + req

    def stream(req, ctx):
        auth = log("Stream", ctx, req)
        ctx.send_initial_metadata((("x-echo", auth),))
        ctx.set_trailing_metadata((("x-echo", auth),))
        for i in range(3):
            yield auth.encode() + (" %d " % i).encode() + req

    handler = grpc.method_handlers_generic_handler("moat.Echo", {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    with open(cert, "rb") as c, open(key, "rb") as k:
        creds = grpc.ssl_server_credentials(((k.read(), c.read()),))
    server.add_secure_port("0.0.0.0:%d" % port, creds)
    server.start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def call(target, kind, token):
    ch = grpc.secure_channel(target, grpc.ssl_channel_credentials())
    md = (("authorization", "Bearer " + token),)
    if kind == "unary":
        f = ch.unary_unary("/moat.Echo/Unary")
        resp, c = f.with_call(b"ping", metadata=md, timeout=20)
        print("answer", resp.decode())
    else:
        f = ch.unary_stream("/moat.Echo/Stream")
        c = f(b"ping", metadata=md, timeout=20)
        for resp in c:
            print("answer", resp.decode())
    print("initial", dict(c.initial_metadata()).get("x-echo"))
    print("trailing", dict(c.trailing_metadata()).get("x-echo"))
    print("code", c.code())


def main():
    a = sys.argv[1:]
    if a and a[0] == "serve":
        o = dict(zip(a[1::2], a[2::2]))
        serve(o["--record"], o["--cert"], o["--key"],
              int(o.get("--port", 443)))
    elif len(a) == 4 and a[0] == "call":
        call(a[1], a[2], a[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
