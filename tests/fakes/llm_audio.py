"""The fake model server's ``/v1/audio/transcriptions`` (Whisper-compatible, multipart)."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from aiohttp import web


@dataclass(frozen=True)
class Transcription:
    """One request as received: the model, the file's name and its bytes."""

    model: str
    filename: str
    data: bytes
    authorization: str


@dataclass
class FakeTranscriptions:
    """Answers ``{"text": ...}``, after ``latency_s``; ``fail_next(n)`` makes the next n
    requests answer 500. ``max_in_flight``: the most requests it held at once."""

    default_text: str = "this is what the voice note said"
    latency_s: float = 0.0
    in_flight: int = 0
    max_in_flight: int = 0
    requests: list[Transcription] = field(default_factory=list)
    _script: deque[str] = field(default_factory=deque)
    _failures: int = 0

    def install(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/transcriptions", self._handle)
        app.router.add_post("/audio/transcriptions", self._handle)

    def script(self, *texts: str) -> None:
        self._script.extend(texts)

    def fail_next(self, times: int = 1) -> None:
        self._failures += times

    async def _handle(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        data = upload.file.read() if isinstance(upload, web.FileField) else b""
        name = upload.filename if isinstance(upload, web.FileField) else ""
        self.requests.append(
            Transcription(
                str(form.get("model") or ""), name, data, request.headers.get("Authorization", "")
            )
        )
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight -= 1
        if self._failures > 0:
            self._failures -= 1
            return web.json_response(
                {"error": {"message": "transcriber down", "type": "server_error"}}, status=500
            )
        text = self._script.popleft() if self._script else self.default_text
        # OpenAI's shape: whisper reports the seconds it heard (what it is billed by)
        return web.json_response({"text": text, "usage": {"type": "duration", "seconds": 3}})
