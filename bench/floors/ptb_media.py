"""Media floor: a bare python-telegram-bot Application that answers photos and voice notes.

What a competent bare bot does with no limits, stores or policies: a photo's largest size is
downloaded into memory (``download_as_bytearray``), scaled down with Pillow in a thread to the
longer side chatgate sends (1568 px, JPEG quality 85: model APIs refuse or shrink bigger
images), and sent as a base64 data URL in one ``litellm.acompletion``; a voice note is
downloaded the same way, transcribed with ``litellm.atranscription`` (whisper-1 at the same
fake server), and the transcript goes to one ``acompletion``. The answer is sent with
``send_message``. Updates are handled concurrently.
Serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
from typing import Any

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bench.floors.ptb_echo import SEND_POOL, TIMEOUT_S

App = Application[Any, Any, Any, Any, Any, Any]
MAX_SIDE = 1568


def shrink(data: bytes) -> bytes:
    """The photo as JPEG no longer than MAX_SIDE on its longer side (blocking: run in a thread)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        img.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        img.convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def build(args: argparse.Namespace) -> App:
    from chatgate.agents.litellm_import import import_litellm

    litellm = import_litellm()  # chatgate's module-level switches: the comparison measures the rest
    common = {"api_base": args.llm_base, "api_key": args.api_key, "timeout": TIMEOUT_S}

    async def complete(content: Any) -> str:
        response = await litellm.acompletion(
            model=args.model,
            messages=[{"role": "user", "content": content}],
            max_retries=0,
            **common,
        )
        return str(response.choices[0].message.content or "")

    async def on_media(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None:
            return
        if message.photo:
            file = await message.photo[-1].get_file()
            data = await asyncio.to_thread(shrink, bytes(await file.download_as_bytearray()))
            url = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
            parts = [{"type": "text", "text": message.caption or "(photo)"}]
            answer = await complete([*parts, {"type": "image_url", "image_url": {"url": url}}])
        elif message.voice:
            file = await message.voice.get_file()
            data = bytes(await file.download_as_bytearray())
            heard = await litellm.atranscription(
                model="whisper-1", file=("voice.ogg", data), **common
            )
            answer = await complete(str(heard.text))
        else:
            return
        await context.bot.send_message(chat_id=message.chat_id, text=answer)

    app = (
        Application.builder()
        .token(args.token)
        .base_url(args.base_url)
        .base_file_url(args.base_url.removesuffix("/bot") + "/file/bot")
        .concurrent_updates(True)
        .connection_pool_size(SEND_POOL)
        .pool_timeout(TIMEOUT_S)
        .build()
    )
    app.add_handler(MessageHandler(filters.PHOTO | filters.VOICE, on_media))
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floors.ptb_media", description=__doc__)
    parser.add_argument("--base-url", required=True, help="Bot API base, ending in /bot")
    parser.add_argument("--token", required=True)
    parser.add_argument("--llm-base", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", required=True)
    args = parser.parse_args(argv)
    build(args).run_polling(poll_interval=0.0, timeout=10, allowed_updates=["message"])


if __name__ == "__main__":
    main()
