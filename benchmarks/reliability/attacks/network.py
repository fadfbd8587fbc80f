"""Reach the host over TCP, UDP, DNS, abstract and path unix sockets."""

import socket

from _probe import SECRETS, attempt, report


def tcp():
    """Connect to the host's TCP listener on loopback."""
    socket.create_connection(("127.0.0.1", SECRETS["tcp_port"]), timeout=2).close()


def udp():
    """Fire and forget: whether it arrived is checked by the host's listener."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"leak", ("127.0.0.1", SECRETS["udp_port"]))


def dns():
    """Resolve a public name."""
    socket.getaddrinfo("pypi.org", 443)


def unix(address):
    """A connect to a unix socket address (abstract or path)."""
    def connect():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            sock.connect(address)
    return connect


attempt(udp)
attempts = {"tcp": tcp, "dns": dns, "abstract": unix("\0" + SECRETS["abstract"]),
            "unix_path": unix(SECRETS["unix_path"])}
reached = [name for name, action in attempts.items() if attempt(action) is None]
report(reached=reached, interfaces=sorted(name for _, name in socket.if_nameindex()))
