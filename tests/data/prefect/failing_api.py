"""A real Prefect API that answers 500 to chosen requests: `python failing_api.py PORT RULE...`.

Each RULE is "METHOD PATH_REGEX [BODY_REGEX]" (one argument): a request whose method is METHOD,
whose path matches PATH_REGEX and whose body matches BODY_REGEX (if given) gets a 500 instead of
Prefect's answer, and one line `500 METHOD PATH` on stdout. Everything else, websockets included,
is Prefect's own app (the one a temporary Prefect server serves), on the database PREFECT_HOME names.
"""

from __future__ import annotations

import re
import sys

import uvicorn
from prefect.server.api.server import create_app


class FailingApi:
    """An ASGI app in front of Prefect's that fails the requests its rules match."""

    def __init__(self, app, rules: list[tuple[str, re.Pattern, re.Pattern | None]]):
        self.app, self.rules = app, rules

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        messages, body = [], b""
        while not messages or messages[-1].get("more_body"):
            messages.append(await receive())
            body += messages[-1].get("body", b"")
        for method, path, content in self.rules:
            if scope["method"] == method and path.search(scope["path"]) and (
                    content is None or content.search(body.decode(errors="replace"))):
                print(f"500 {method} {scope['path']}", flush=True)
                await send({"type": "http.response.start", "status": 500,
                            "headers": [(b"content-type", b"application/json")]})
                return await send({"type": "http.response.body", "body": b'{"detail": "failing on purpose"}'})

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await self.app(scope, replay, send)


def parse_rule(text: str) -> tuple[str, re.Pattern, re.Pattern | None]:
    """'POST ^/api/artifacts/$' -> ("POST", path regex, None); a third part is a body regex."""
    method, path, *content = text.split(maxsplit=2)
    return method, re.compile(path), re.compile(content[0]) if content else None


if __name__ == "__main__":
    port, *rules = sys.argv[1:]
    app = FailingApi(create_app(ephemeral=True, final=True), [parse_rule(rule) for rule in rules])
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="error")
