"""localstripe (PyPI, 1.15.10) for the tests, wrapped: bound to 127.0.0.1 on an ephemeral port
(printed on the first line of stdout) instead of every address, and its pickle kept in the
private folder given as the first argument (mode 0600) instead of a path shared by every user of
/tmp. Nothing is loaded from an earlier run. The package itself is installed in the tests'
throwaway venv by the Makefile; this file is SaveDesk's own."""
import os
import socket
import sys

from aiohttp import web
from localstripe import resources, server


def main():
    folder = sys.argv[1]
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, "localstripe.pickle")

    def dump_to_disk(store):
        import pickle
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as f:
            pickle.dump(dict(store), f, protocol=pickle.HIGHEST_PROTOCOL)

    resources.Store.dump_to_disk = dump_to_disk
    resources.Store.try_load_from_disk = lambda store: None

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    web.run_app(server.app, sock=sock, print=None, access_log=None)


if __name__ == "__main__":
    main()
