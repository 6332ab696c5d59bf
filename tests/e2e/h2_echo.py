"""An HTTP/2 echo server for the credential broker's tests (Debian
python3-h2), run in a test host's network namespace:

    python3 h2_echo.py --record FILE --cert PEM --key KEY [--port 443]

TLS with ALPN h2 only. Each connection is one JSON line appended to FILE,
{"conn": N, "alpn": "h2" or null} (a connection without h2 is closed
then), and so is each stream's request: {"conn": N, "stream": ID,
"headers": [[name, value], ...], "body": "..."}, or a reset:
{"conn": N, "stream": ID, "reset": true}. The answer is JSON: the path, the headers, the body and
"authorization" (that header's value, or null); by path (the query
aside):

    /header    also x-echo: the authorization value, in the headers
    /trailers  also x-echo in trailers after the body
    /big?n=N   N bytes of "x" after the JSON line

Prints "ready" when it listens.
"""
import argparse
import json
import socket
import ssl
import threading
import urllib.parse

import h2.config
import h2.connection
import h2.events

lock = threading.Lock()
conn_ids = iter(range(1, 1 << 62))


def record(path, entry):
    with lock, open(path, "a") as f:
        f.write(json.dumps(entry, separators=(",", ":")) + "\n")


def serve(sock, args):
    conn_id = next(conn_ids)
    alpn = sock.selected_alpn_protocol()
    record(args.record, {"conn": conn_id, "alpn": alpn})
    if alpn != "h2":
        sock.close()
        return
    h2c = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    h2c.initiate_connection()
    sock.sendall(h2c.data_to_send())
    streams = {}
    pending = {}  # stream -> bytes left to send (flow control)

    def flush():
        for sid in list(pending):
            data, trailers = pending[sid]
            while data:
                room = min(h2c.local_flow_control_window(sid),
                           h2c.max_outbound_frame_size)
                if room <= 0:
                    break
                h2c.send_data(sid, data[:room])
                data = data[room:]
            if data:
                pending[sid] = (data, trailers)
                continue
            del pending[sid]
            if trailers:
                h2c.send_headers(sid, trailers, end_stream=True)
            else:
                h2c.end_stream(sid)

    def answer(sid):
        hdrs, body = streams.pop(sid)
        record(args.record, {"conn": conn_id, "stream": sid,
                             "headers": hdrs, "body": body.decode("latin-1")})
        d = dict(hdrs)
        auth = d.get("authorization")
        url = urllib.parse.urlsplit(d.get(":path", "/"))
        q = urllib.parse.parse_qs(url.query)
        out = json.dumps({"path": d.get(":path"), "headers": hdrs,
                          "body": body.decode("latin-1"),
                          "authorization": auth}).encode() + b"\n"
        if url.path == "/big":
            out += b"x" * int(q.get("n", ["0"])[0])
        rh = [(":status", "200"), ("content-type", "application/json"),
              ("content-length", str(len(out)))]
        if url.path == "/header":
            rh.append(("x-echo", auth or ""))
        trailers = None
        if url.path == "/trailers":
            trailers = [("x-echo", auth or "")]
            rh = [h for h in rh if h[0] != "content-length"]
        h2c.send_headers(sid, rh)
        pending[sid] = (out, trailers)

    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            for ev in h2c.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    streams[ev.stream_id] = (list(map(list, ev.headers)), b"")
                    if ev.stream_ended:
                        answer(ev.stream_id)
                elif isinstance(ev, h2.events.DataReceived):
                    h2c.acknowledge_received_data(
                        ev.flow_controlled_length, ev.stream_id)
                    if ev.stream_id in streams:
                        h, b = streams[ev.stream_id]
                        streams[ev.stream_id] = (h, b + ev.data)
                elif isinstance(ev, h2.events.StreamEnded):
                    if ev.stream_id in streams:
                        answer(ev.stream_id)
                elif isinstance(ev, h2.events.StreamReset):
                    streams.pop(ev.stream_id, None)
                    pending.pop(ev.stream_id, None)
                    record(args.record, {"conn": conn_id,
                                         "stream": ev.stream_id,
                                         "reset": True})
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    break
            flush()
            sock.sendall(h2c.data_to_send())
    except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
        pass
    finally:
        sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--port", type=int, default=443)
    args = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    ctx.set_alpn_protocols(["h2"])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", args.port))
    ls.listen(64)
    print("ready", flush=True)
    while True:
        s, _ = ls.accept()
        try:
            t = ctx.wrap_socket(s, server_side=True)
        except (OSError, ssl.SSLError):
            s.close()
            continue
        threading.Thread(target=serve, args=(t, args), daemon=True).start()


if __name__ == "__main__":
    main()
