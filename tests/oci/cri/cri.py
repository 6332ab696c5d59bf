#!/usr/bin/python3
"""tests/oci/cri/cri.py GEN SOCKET METHOD [JSON]: one CRI call, as kubelet
makes it, to the containerd whose socket is SOCKET; prints the response as
JSON (proto3's mapping, camelCase names) and exits 0, or prints the gRPC
status to stderr and exits 1. METHOD is a RuntimeService method
(RunPodSandbox, ExecSync, ...); JSON is its request, in the same mapping.
GEN is a directory for the stubs made from cri.proto (beside this file)
by Debian's grpc_tools; they are made there when missing."""
import os
import sys


def stubs(gen):
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(gen, "cri_pb2_grpc.py")):
        from grpc_tools import protoc

        os.makedirs(gen, exist_ok=True)
        rc = protoc.main(["protoc", "-I" + here, "--python_out=" + gen,
                          "--grpc_python_out=" + gen,
                          os.path.join(here, "cri.proto")])
        if rc != 0:
            sys.exit("cri.py: protoc failed on cri.proto")
    sys.path.insert(0, gen)
    import cri_pb2
    import cri_pb2_grpc

    return cri_pb2, cri_pb2_grpc


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    gen, sock, method = sys.argv[1:4]
    body = sys.argv[4] if len(sys.argv) == 5 else "{}"
    pb, rpc = stubs(gen)
    import grpc
    from google.protobuf import json_format

    req_type = getattr(pb, method + "Request", None)
    if req_type is None:
        sys.exit("cri.py: no method " + method + " in cri.proto")
    req = json_format.Parse(body, req_type())
    # ExecSync and StopContainer take their own timeout; the call waits
    # that long and a bit, never forever
    deadline = 120
    with grpc.insecure_channel("unix://" + sock) as ch:
        stub = rpc.RuntimeServiceStub(ch)
        try:
            resp = getattr(stub, method)(req, timeout=deadline)
        except grpc.RpcError as e:
            print("%s: %s: %s" % (method, e.code().name, e.details()),
                  file=sys.stderr)
            sys.exit(1)
    print(json_format.MessageToJson(resp, indent=None))


if __name__ == "__main__":
    main()
