"""Teams floor: a bare Teams SDK bot answering every message.

The least a competent bot on `microsoft-teams-api` does: verify the Bot Framework JWT (PyJWT,
the same rules as chatgate: RS256 key from the cloud's JWKS fetched once, issuer, audience,
expiry, `serviceurl`), parse the activity with the SDK's models, answer Teams 200 at once and,
in a task, get the answer (one ``litellm.acompletion`` with ``--mode llm`` or the text itself
with ``--mode echo``) and post it with the SDK's conversation client, its token from the SDK's
client-credentials client (cached). No journal, no dedupe, no sessions, no typing, no retries.
Prints ``READY <port>``; serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import time
from typing import Any

import aiohttp
import jwt
from aiohttp import web

from bench.floors.model_args import add_model_args, parse_with_model
from bench.floors.ptb_echo import Reply, make_reply

ISSUER = "https://api.botframework.com"
TIMEOUT_S = 30


class Tokens:
    def __init__(self, client: Any, credentials: Any) -> None:
        self.client, self.credentials = client, credentials
        self.token, self.until = "", 0.0

    async def get(self) -> str:
        if time.monotonic() >= self.until:
            answer = await self.client.get(self.credentials)
            self.token, self.until = answer.access_token, time.monotonic() + answer.expires_in - 300
        return self.token


async def serve(args: argparse.Namespace) -> None:
    from microsoft_teams.api.activities import ActivityTypeAdapter
    from microsoft_teams.api.activities.message import MessageActivityInput
    from microsoft_teams.api.auth.cloud_environment import PUBLIC, with_overrides
    from microsoft_teams.api.auth.credentials import ClientCredentials
    from microsoft_teams.api.clients.api_client import ApiClient
    from microsoft_teams.api.clients.bot.token_client import BotTokenClient
    from microsoft_teams.common.http import Client, ClientOptions

    reply: Reply = make_reply(args)
    cloud = with_overrides(PUBLIC, login_endpoint=args.login, openid_metadata_url=args.metadata)
    tokens = Tokens(
        BotTokenClient(ClientOptions(timeout=TIMEOUT_S), cloud=cloud),
        ClientCredentials(client_id=args.app_id, client_secret=args.app_password),
    )
    http = Client(ClientOptions(timeout=TIMEOUT_S, token=tokens.get))
    clients: dict[str, Any] = {}
    async with aiohttp.ClientSession() as session:
        async with session.get(args.metadata) as response:
            jwks_uri = (await response.json())["jwks_uri"]
        async with session.get(jwks_uri) as response:
            keys = {k["kid"]: jwt.PyJWK(k, "RS256").key for k in (await response.json())["keys"]}
    tasks: set[asyncio.Task[None]] = set()

    async def answer(activity: Any) -> None:
        text = await reply(activity.text or "")
        url = activity.service_url
        api = clients.get(url) or clients.setdefault(url, ApiClient(url, http, cloud=cloud))
        await api.conversations.create_activity(
            activity.conversation.id, MessageActivityInput(text=text, text_format="markdown")
        )

    async def messages(request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        try:
            key = keys[jwt.get_unverified_header(token)["kid"]]
            claims = jwt.decode(
                token, key, algorithms=["RS256"], audience=args.app_id, issuer=ISSUER, leeway=300
            )
        except (jwt.InvalidTokenError, KeyError):
            return web.json_response({"error": "unauthorized"}, status=401)
        activity = ActivityTypeAdapter.validate_python(json.loads(await request.read()))
        if claims.get("serviceurl", "").rstrip("/") != (activity.service_url or "").rstrip("/"):
            return web.json_response({"error": "unauthorized"}, status=401)
        if activity.type == "message" and activity.text:
            task = asyncio.create_task(answer(activity))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/teams/messages", messages)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", args.port).start()
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    print(f"READY {runner.addresses[0][1]}", flush=True)
    try:
        await done.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floors.teams_echo", description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--login", required=True, help="login endpoint origin (the fake's)")
    parser.add_argument("--metadata", required=True, help="OpenID metadata URL (the fake's)")
    parser.add_argument("--app-id", required=True)
    parser.add_argument("--app-password", required=True)
    add_model_args(parser)
    args = parse_with_model(parser, argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
