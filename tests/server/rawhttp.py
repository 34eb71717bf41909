"""A minimal HTTP/1.1 client that shows what requests and http.client hide:
the chunked framing, whether the terminating chunk arrived, and trailers."""

import socket
from dataclasses import dataclass, field
from urllib.parse import urlencode


@dataclass
class RawResponse:
    status: int
    headers: dict
    body: bytes
    trailers: dict = field(default_factory=dict)
    complete: bool = False  # the zero-length final chunk arrived


def get(host, port, path, params, headers=None, timeout=60.0) -> RawResponse:
    target = path + "?" + urlencode(params)
    lines = [f"GET {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while True:
            try:
                part = sock.recv(1 << 20)
            except (ConnectionResetError, socket.timeout):
                break
            if not part:
                break
            data += part
    head, _, rest = data.partition(b"\r\n\r\n")
    head_lines = head.decode("latin-1").split("\r\n")
    status = int(head_lines[0].split()[1])
    headers = {}
    for line in head_lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding") != "chunked":
        return RawResponse(status, headers, rest, complete=True)
    body = b""
    trailers = {}
    complete = False
    while rest:
        size_line, sep, rest = rest.partition(b"\r\n")
        if not sep:
            break
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            complete = True
            for line in rest.decode("latin-1").split("\r\n"):
                if line:
                    k, _, v = line.partition(":")
                    trailers[k.strip().lower()] = v.strip()
            break
        if len(rest) < size + 2:
            body += rest[:size]
            break
        body += rest[:size]
        rest = rest[size + 2 :]
    return RawResponse(status, headers, body, trailers, complete)
