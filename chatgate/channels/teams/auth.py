"""Bot Framework authentication, both ways.

Inbound: the connector's bearer JWT is checked before the body is read further: the signing
key comes from the cloud's OpenID metadata (its `jwks_uri`, cached a day, refetched once on an
unknown key id), then the RS256 signature, issuer, audience (the app id), expiry (5 min skew)
and the key's endorsement of the `msteams` channel. The `serviceurl` claim is returned for the
caller to compare with the activity's. PyJWT does the JWT rules; the keys are fetched over
aiohttp (the SDK's validator fetches them with a blocking call).

Outbound: client-credentials tokens from the SDK's token client, cached until five minutes
before they expire; concurrent callers share one refresh.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp
import jwt

from chatgate.clock import Clock

SKEW_S = 300
KEYS_TTL_S = 86_400.0
KEYS_REFETCH_MIN_S = 300.0
TOKEN_EARLY_S = 300.0
CHANNEL = "msteams"


class Unverified(Exception):
    """The request's token is missing or fails a rule (the reason is safe to log)."""


@dataclass(frozen=True)
class Claims:
    service_url: str
    app_id: str  # the caller's (`appid`), for logs


class Verifier:
    """Checks inbound Bot Framework tokens against the cloud's published signing keys."""

    def __init__(
        self,
        app_id: str,
        issuer: str,
        metadata_url: str,
        session: aiohttp.ClientSession,
        clock: Clock,
    ) -> None:
        self.app_id = app_id
        self.issuer = issuer
        self.metadata_url = metadata_url
        self._session = session
        self._clock = clock
        self._keys: dict[str, dict[str, Any]] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    async def verify(self, authorization: str | None) -> Claims:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise Unverified("no bearer token")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise Unverified("malformed token") from None
        if header.get("alg") != "RS256":
            raise Unverified("unexpected algorithm")
        jwk = await self._key(str(header.get("kid") or ""))
        if CHANNEL not in (jwk.get("endorsements") or ()):
            raise Unverified("signing key does not endorse msteams")
        try:
            key = jwt.PyJWK(jwk, algorithm="RS256").key
            claims = jwt.decode(
                token,
                key,
                algorithms=["RS256"],
                audience=self.app_id,
                issuer=self.issuer,
                leeway=SKEW_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.InvalidTokenError as exc:
            raise Unverified(type(exc).__name__) from None
        return Claims(str(claims.get("serviceurl") or ""), str(claims.get("appid") or ""))

    async def _key(self, kid: str) -> dict[str, Any]:
        now = self._clock.time()
        stale = self._fetched_at is None or now - self._fetched_at > KEYS_TTL_S
        missing = kid not in self._keys
        may_refetch = self._fetched_at is None or now - self._fetched_at > KEYS_REFETCH_MIN_S
        if stale or (missing and may_refetch):
            async with self._lock:
                if self._fetched_at is None or self._clock.time() - self._fetched_at > 1.0:
                    await self.refresh()
        found = self._keys.get(kid)
        if found is None:
            raise Unverified("unknown signing key")
        return found

    async def refresh(self) -> None:
        """Fetch the OpenID metadata, then its key set."""
        try:
            metadata = await self._json(self.metadata_url)
            keys = await self._json(str(metadata["jwks_uri"]))
        except (aiohttp.ClientError, TimeoutError, KeyError, ValueError) as exc:
            raise Unverified(f"signing keys unavailable ({type(exc).__name__})") from None
        self._keys = {
            str(k["kid"]): k for k in keys.get("keys", ()) if isinstance(k, dict) and k.get("kid")
        }
        self._fetched_at = self._clock.time()

    async def _json(self, url: str) -> dict[str, Any]:
        async with self._session.get(url) as response:
            response.raise_for_status()
            data = json.loads(await response.read())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return data


class TokenSource:
    """The bot's outbound access token (client-credentials flow through the SDK's client)."""

    def __init__(self, client: Any, credentials: Any, clock: Clock) -> None:
        self._client = client  # microsoft_teams BotTokenClient
        self._credentials = credentials
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def get(self) -> str:
        if self._token is not None and self._clock.time() < self._expires_at:
            return self._token
        async with self._lock:
            if self._token is None or self._clock.time() >= self._expires_at:
                answer = await self._client.get(self._credentials)
                self.fetches += 1
                lifetime = max(float(answer.expires_in), 0.0)
                self._token = str(answer.access_token)
                self._expires_at = self._clock.time() + max(lifetime - TOKEN_EARLY_S, 0.0)
            return self._token

    async def close(self) -> None:
        await self._client.close()

    def forget(self) -> None:
        """A connector refused the token: fetch a new one next time."""
        self._token = None
