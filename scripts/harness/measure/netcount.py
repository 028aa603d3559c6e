"""A plain UDP relay on loopback that forwards everything at once and counts what it
forwards: datagrams and bytes per direction, each stamped with the monotonic clock. It
stands where `intercom relay` stands in the calls, for the figures of bytes on the wire, so
that ours and the anchors are counted the same way."""
import select
import socket
import threading
import time

import numpy as np


class CountingRelay:
    """A → listen_a → (this) → listen_b → peer_b, and B's replies back to A's address.
    Several independent flows may be relayed at once (`add`)."""

    def __init__(self):
        self.flows = []
        self._stop = threading.Event()
        self._thread = None

    def add(self, listen_a, listen_b, peer_b, name):
        sa = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sa.bind(("127.0.0.1", listen_a))
        sb = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sb.bind(("127.0.0.1", listen_b))
        self.flows.append(dict(name=name, sa=sa, sb=sb, peer_b=("127.0.0.1", peer_b), peer_a=None,
                               a_to_b=[], b_to_a=[]))

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        sockets = {}
        for f in self.flows:
            sockets[f["sa"].fileno()] = (f, "a")
            sockets[f["sb"].fileno()] = (f, "b")
        while not self._stop.is_set():
            ready, _, _ = select.select(list(sockets), [], [], 0.1)
            for fd in ready:
                f, side = sockets[fd]
                s = f["sa"] if side == "a" else f["sb"]
                try:
                    data, addr = s.recvfrom(65536)
                except OSError:
                    continue
                now = time.monotonic()
                try:
                    if side == "a":
                        f["peer_a"] = addr
                        f["a_to_b"].append((now, len(data)))
                        f["sb"].sendto(data, f["peer_b"])
                    elif f["peer_a"] is not None:
                        f["b_to_a"].append((now, len(data)))
                        f["sa"].sendto(data, f["peer_a"])
                except OSError:
                    pass  # the receiver is not there yet, or has gone

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)
        for f in self.flows:
            f["sa"].close()
            f["sb"].close()

    @staticmethod
    def rate(records, t0, t1):
        """Datagrams/s, UDP payload bytes/s and IPv4 bytes/s (28 bytes of IPv4 + UDP headers
        per datagram) between monotonic times t0 and t1."""
        if not records or t1 <= t0:
            return dict(datagrams_per_s=float("nan"), udp_bytes_per_s=float("nan"), ip_bytes_per_s=float("nan"))
        t = np.array([r[0] for r in records])
        n = np.array([r[1] for r in records])
        sel = (t >= t0) & (t < t1)
        d = t1 - t0
        return dict(datagrams_per_s=float(sel.sum() / d), udp_bytes_per_s=float(n[sel].sum() / d),
                    ip_bytes_per_s=float((n[sel].sum() + 28 * sel.sum()) / d),
                    bytes_per_datagram=float(n[sel].mean()) if sel.any() else float("nan"))
