"""A client of the site as its TLS proxy forwards requests: the public Host, X-Forwarded-Proto
and Secure-only cookies over the loopback's plain HTTP."""

from __future__ import annotations

import http.client
import json
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

HOST = "evalsite.example.org"  # .env.example's ALLOWED_HOSTS, as the TLS proxy forwards it


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


@dataclass
class Client:
    """One user's client of the site behind its TLS proxy: every request carries what the proxy
    adds (the public Host, X-Forwarded-Proto: https). Cookies are kept here because they are
    Secure-only, which a cookie jar would not send over the loopback's plain HTTP."""

    port: int
    token: str | None = None
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        secure: bool = True,
    ) -> Response:
        sent = {"Host": HOST, **(headers or {})}
        if secure:
            sent["X-Forwarded-Proto"] = "https"
        if self.token:
            sent["Authorization"] = f"Token {self.token}"
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=sent)
            reply = connection.getresponse()
            data = reply.read()
            for header in reply.headers.get_all("Set-Cookie") or []:
                name, _, rest = header.partition("=")
                self.cookies[name.strip()] = rest.split(";")[0]
            return Response(reply.status, dict(reply.headers.items()), data)
        finally:
            connection.close()

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def post_json(self, path: str, data: Any) -> Response:
        return self.request(
            "POST",
            path,
            body=json.dumps(data).encode(),
            headers={"Content-Type": "application/json"},
        )

    def post_form(self, path: str, data: list[tuple[str, str]]) -> Response:
        """A form POST as a browser sends it: the CSRF token from the cookie, and the Origin
        that Django compares with the host on HTTPS."""
        data = [*data, ("csrfmiddlewaretoken", self.cookies["csrftoken"])]
        return self.request(
            "POST",
            path,
            body=urlencode(data).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": f"https://{HOST}",
                "Referer": f"https://{HOST}{path}",
            },
        )

    def post_files(self, path: str, files: list[tuple[str, str, bytes]]) -> Response:
        boundary = uuid.uuid4().hex
        parts = []
        for name, filename, content in files:
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{filename}"\r\nContent-Type: text/plain\r\n\r\n'.encode()
                + content
                + b"\r\n"
            )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        return self.request(
            "POST",
            path,
            body=body,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
