"""A gRPC client outside Go: python3-grpcio against urlhash serve --frontier.

Generates the Python stubs from urlfrontier.proto with protoc and Debian's
grpc_python_plugin, starts a server (the binary in $URLHASH_BIN), puts
URLs, gets them, completes them and checks the stats. Run by .ci/run:

    URLHASH_BIN=/path/to/urlhash python3 frontier/urlfrontier/testdata/smoke.py
"""

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.dirname(HERE)


def main():
    work = tempfile.mkdtemp(prefix="urlfrontier-smoke-")
    subprocess.run(["protoc", "-I", PROTO_DIR, "--python_out=" + work, "--grpc_python_out=" + work,
                    "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin", "urlfrontier.proto"], check=True)
    sys.path.insert(0, work)
    import grpc
    import urlfrontier_pb2 as pb
    import urlfrontier_pb2_grpc as rpc

    server = subprocess.Popen([os.environ["URLHASH_BIN"], "serve", "--db", os.path.join(work, "idx"),
                               "--listen", "127.0.0.1:0", "--frontier", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        server.stderr.readline()
        line = server.stderr.readline().strip()
        assert line.startswith("urlhash: frontier on grpc://"), line
        addr = line.split("grpc://", 1)[1]
        stub = rpc.URLFrontierStub(grpc.insecure_channel(addr))
        stub.SetDelay(pb.QueueDelayParams(delay_requestable=0))

        urls = ["https://a.example/1", "HTTPS://A.EXAMPLE:443/1", "https://a.example/2", "https://b.example/1", "not a url"]
        items = [pb.URLItem(discovered=pb.DiscoveredURLItem(info=pb.URLInfo(url=u))) for u in urls]
        acks = [(a.ID, pb.AckMessage.Status.Name(a.status)) for a in stub.PutURLs(iter(items))]
        want = [("https://a.example/1", "OK"), ("HTTPS://A.EXAMPLE:443/1", "SKIPPED"), ("https://a.example/2", "OK"),
                ("https://b.example/1", "OK"), ("not a url", "SKIPPED")]
        assert acks == want, acks

        batch = pb.DiscoveredBatch(ID="page", items=[pb.URLInfo(url="https://c.example/x"), pb.URLInfo(url="https://a.example/2")])
        back = list(stub.PutDiscovered(iter([batch])))
        assert [b.ID for b in back] == ["page"] and list(back[0].statuses) == [pb.AckMessage.OK, pb.AckMessage.SKIPPED], back

        got = [i.url for i in stub.GetURLs(pb.GetParams(max_urls_per_queue=5, crawlID=""))]
        assert sorted(got) == ["https://a.example/1", "https://a.example/2", "https://b.example/1", "https://c.example/x"], got
        done = [pb.URLItem(known=pb.KnownURLItem(info=pb.URLInfo(url=u))) for u in got]
        assert all(a.status == pb.AckMessage.OK for a in stub.PutURLs(iter(done)))

        stats = stub.GetStats(pb.QueueWithinCrawlParams())
        assert stats.size == 0 and stats.counts["completed"] == 4 and stats.numberOfQueues == 3, stats
        status = stub.GetURLStatus(pb.URLStatusRequest(url="https://a.example/1"))
        assert status.known.refetchable_from_date == 0, status
        try:
            stub.GetURLStatus(pb.URLStatusRequest(url="https://nowhere.example/"))
            raise AssertionError("GetURLStatus of an unknown URL answered")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.NOT_FOUND, e
        assert list(stub.ListNodes(pb.Empty()).values) == [addr]
        print("grpcio: 9 passed, 0 failed")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
