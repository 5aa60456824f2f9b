"""Structured logging: one line per turn with its reason codes, text or JSON, secrets scrubbed."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, TextIO

from chatgate import tracing
from chatgate.config.masking import Masker
from chatgate.gateway.process.log_handler import LoopBatchedHandler
from chatgate.model.compact import scalar_json

REDACTED = "**********"
_LINE = json.JSONEncoder(default=str, ensure_ascii=False)  # one encoder, not one per record
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {
    "message",
    "asctime",
}


class SecretScrubber(logging.Filter):
    """Replaces every known secret value in log output.

    The daemon's handler scrubs each formatted line once (`ScrubbingFormatter`), which also covers
    the message, its args, every extra field and exception text; as a `logging.Filter` it still
    scrubs a record in place for handlers that format on their own.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: tuple[str, ...] = ()
        self.update(secrets)

    def update(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True))
        # A JSON line carries a secret with quotes, backslashes or control characters escaped.
        escaped = (json.dumps(s, ensure_ascii=False)[1:-1] for s in self.secrets)
        self._masker = Masker(self.secrets + tuple(escaped))

    def scrub(self, text: str) -> str:
        return self._masker.mask(text)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.scrub(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        for key, value in list(vars(record).items()):
            if key not in _RESERVED and isinstance(value, str):
                setattr(record, key, self.scrub(value))
        return True


class ScrubbingFormatter(logging.Formatter):
    """Formats with ``inner`` and scrubs the finished line: one scan per record, not per field."""

    def __init__(self, inner: logging.Formatter, scrubber: SecretScrubber) -> None:
        super().__init__()
        self.inner = inner
        self.scrubber = scrubber

    def format(self, record: logging.LogRecord) -> str:
        return self.scrubber.scrub(self.inner.format(record))


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return _traced({k: v for k, v in vars(record).items() if k not in _RESERVED and k[0] != "_"})


def _traced(fields: dict[str, Any]) -> dict[str, Any]:
    ids = tracing.ids()  # formatted where logged: the span current where the line was written
    if ids is not None:
        fields["trace_id"], fields["span_id"] = ids
    return fields


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = self.line(record.created, record.levelname, record.name, record.getMessage(),
                         _fields(record))  # fmt: skip
        if record.exc_text:
            line += "\n" + record.exc_text
        elif record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line

    @staticmethod
    def line(created: float, level: str, name: str, msg: str, fields: dict[str, Any]) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
        extra = " ".join(f"{k}={_text(v)}" for k, v in fields.items())
        line = f"{stamp} {level.lower():7} {name}: {msg}"
        return line + " " + extra if extra else line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data = self.data(record.created, record.levelname, record.name, record.getMessage())
        data.update(_fields(record))
        if record.exc_text:
            data["exc"] = record.exc_text
        elif record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return _LINE.encode(data)

    @staticmethod
    def data(created: float, level: str, name: str, msg: str) -> dict[str, Any]:
        return {"ts": round(created, 3), "level": level.lower(), "logger": name, "msg": msg}

    def line(self, created: float, level: str, name: str, msg: str, fields: dict[str, Any]) -> str:
        """The line `format` writes for these fields: flat scalar fields are encoded one by
        one (the encoder's per-call set-up was most of a per-turn line's cost), others whole."""
        head = f'{{"ts": {round(created, 3)!r}, "level": {_STR(level.lower())}, "logger": '
        parts = [head, _STR(name), ', "msg": ', _STR(msg)]
        if not _HEAD.isdisjoint(fields):
            parts = []
        for key, value in fields.items() if parts else ():
            # str and None inline: most of a turn line's fields, a call each saved
            if type(value) is str:
                encoded = _STR(value)
            elif value is None:
                encoded = "null"
            else:
                scalar = scalar_json(value, _STR)
                if scalar is None:
                    parts = []
                    break
                encoded = scalar
            parts += (", ", _KEYS.get(key) or _key(key), ": ", encoded)
        if not parts:
            data = self.data(created, level, name, msg)
            data.update(fields)
            return _LINE.encode(data)
        parts.append("}")
        return "".join(parts)


_STR = encode_basestring  # what the encoder writes a str with (ensure_ascii off)
_HEAD = frozenset({"ts", "level", "logger", "msg"})
_KEYS: dict[str, str] = {}


def _key(key: str) -> str:
    encoded = _KEYS.get(key)
    if encoded is None:
        encoded = _STR(key)
        if len(_KEYS) < 1024:  # field names come from code: a few dozen
            _KEYS[key] = encoded
    return encoded


@dataclass(frozen=True, slots=True)
class _Direct:
    """The daemon's handler and what formats its lines (`setup_logging` installs it)."""

    handler: LoopBatchedHandler
    formatter: ScrubbingFormatter
    inner: JsonFormatter | TextFormatter


_direct: _Direct | None = None


def log_fields(logger: logging.Logger, level: int, msg: str, fields: dict[str, Any]) -> None:
    """``logger.log(level, msg, extra=fields)``, the same line, but without a LogRecord (and
    the logging machinery around it) when the daemon's handler is the only place it goes: the
    per-turn line cost a tenth of a webhook request's instructions that way."""
    if not logger.isEnabledFor(level):
        return
    direct = _direct
    if direct is None or not _only_to(logger, level, direct):
        logger.log(level, msg, extra=fields)
        return
    name = logging.getLevelName(level)
    traced = _traced(dict(fields)) if tracing.on() else fields  # the caller's dict is kept as is
    line = direct.inner.line(time.time(), name, logger.name, msg, traced)
    direct.handler.emit_line(direct.formatter.scrubber.scrub(line))


def _only_to(logger: logging.Logger, level: int, direct: _Direct) -> bool:
    """Whether a record of ``logger`` at ``level`` would reach ``direct``'s handler and no other
    handler, no filter and no other formatter on the way (a test's capture, a plugin's handler)."""
    handler = direct.handler
    if logger.disabled or logger.filters or handler.filters or level < handler.level:
        return False
    if logging.getLogRecordFactory() is not logging.LogRecord:  # it may add fields
        return False
    if handler.formatter is not direct.formatter:
        return False
    reached = False
    current: logging.Logger | None = logger
    while current is not None:
        for other in current.handlers:
            if other is not handler:
                return False
            reached = True
        current = current.parent if current.propagate else None
    return reached


# Characters that end or rewrite a terminal line: C0/C1 controls, DEL, line separators.
_UNSAFE = re.compile("[\x00-\x20\x7f-\x9f\u2028\u2029]")


def _text(value: Any) -> str:
    """A field value as typed (UTF-8 stays readable: "→", "ä"), quoted when it has spaces or
    characters that would break the line."""
    text = str(value)
    if text and not _UNSAFE.search(text):
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    return _UNSAFE.sub(
        lambda m: m.group() if m.group() == " " else f"\\u{ord(m.group()):04x}", quoted
    )


@dataclass
class LogSetup:
    scrubber: SecretScrubber
    handler: logging.Handler

    def stop(self) -> None:
        """Flush what is buffered (called at exit; safe to call twice)."""
        self.handler.flush()


# SDK loggers that log every request at INFO; channels add their own through their descriptors.
NOISY_LOGGERS = ("httpx", "httpcore", "LiteLLM", "litellm", "aiohttp.access", "openai")


def setup_logging(
    level: str,
    fmt: str,
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
    noisy_loggers: Iterable[str] = (),
) -> LogSetup:
    """Configure the root logger once for the daemon (stderr unless ``stream`` is given).

    Records are formatted where they are logged: a handler thread behind a queue was measured
    ~20% slower per turn here (the formatting thread and the event loop contend for the GIL); the
    lines of one loop iteration are written together (`LoopBatchedHandler`). What no line
    shows is not collected (the logging HOWTO's "Optimization"): caller file/line, thread and
    process names; the per-turn line was ~40% cheaper without them.
    """
    logging._srcfile = None  # no stack walk per record (documented knob, see above)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    scrubber = SecretScrubber(secrets)
    handler = LoopBatchedHandler(stream or sys.stderr)
    inner = JsonFormatter() if fmt == "json" else TextFormatter()
    formatter = ScrubbingFormatter(inner, scrubber)
    handler.setFormatter(formatter)
    global _direct
    _direct = _Direct(handler, formatter, inner)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in (*NOISY_LOGGERS, *noisy_loggers):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    return LogSetup(scrubber, handler)
