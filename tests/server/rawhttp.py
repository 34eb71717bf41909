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
    # A bytearray and offsets, not `bytes +=` and slicing: a result of
    # hundreds of MB would take seconds to reassemble otherwise, and tests
    # that time the server would be timing this client.
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        data = bytearray()
        while True:
            try:
                part = sock.recv(1 << 20)
            except (ConnectionResetError, socket.timeout):
                break
            if not part:
                break
            data += part
    end_of_head = data.find(b"\r\n\r\n")
    head = bytes(data[:end_of_head]) if end_of_head >= 0 else bytes(data)
    at = end_of_head + 4 if end_of_head >= 0 else len(data)
    head_lines = head.decode("latin-1").split("\r\n")
    status = int(head_lines[0].split()[1])
    headers = {}
    for line in head_lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding") != "chunked":
        return RawResponse(status, headers, bytes(data[at:]), complete=True)
    body = bytearray()
    trailers = {}
    complete = False
    view = memoryview(data)
    while at < len(data):
        line_end = data.find(b"\r\n", at)
        if line_end < 0:
            break
        size = int(bytes(data[at:line_end]).split(b";")[0], 16)
        at = line_end + 2
        if size == 0:
            complete = True
            for line in bytes(data[at:]).decode("latin-1").split("\r\n"):
                if line:
                    k, _, v = line.partition(":")
                    trailers[k.strip().lower()] = v.strip()
            break
        body += view[at : at + size]
        at += size + 2
    view.release()
    return RawResponse(status, headers, bytes(body), trailers, complete)
