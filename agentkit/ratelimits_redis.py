"""Limits shared by replicas: counted in one Redis server (``pip install 'agentkit[redis]'``).

Every check of a call runs in one Lua script on the server (registered with the
client's ``register_script``), so two replicas admitting calls at the same moment
are serialised by Redis: a window of N per interval admits at most N calls in any
interval across every replica, exactly. Times are the Redis server's clock
(``TIME``), so replicas whose clocks disagree still count one window.

- Windows: a sorted set per key of the admitted calls' times, trimmed to the
  interval on each check and expiring with it.
- Concurrency: a sorted set per key of the leases held, scored by when each
  expires (``lease_seconds`` after it was taken, default 10 minutes). A call that
  ends gives its lease back; a replica that died mid-call loses it when it expires,
  so a crash holds a slot for at most ``lease_seconds``. A call that runs longer
  than that no longer counts: set it above the longest call.
- Pauses: a key with a time to live; a shorter pause never shortens a longer one.
- Cached answers (``agentkit.callcache``): a key with a time to live; while Redis
  cannot be reached a lookup is a miss (kept in the process with ``"local"``). An
  answer Redis refuses to keep (at its ``maxmemory``) is not kept, logged once; so is
  an upstream's pause (its 429 still fails the call that got it).

When Redis cannot be reached (``unreachable``): ``"refuse"`` refuses every call
with limits (``LimitedError``, scope ``store``), ``"local"`` counts them in this
process (``LocalStore``) until Redis answers again; either way the outage is logged
once, as is the recovery, and Redis is tried again every ``retry_seconds``. One
Redis server, not a cluster: a call's keys may lie in different slots.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any, Final, Literal, final
from urllib.parse import urlsplit

from agentkit.ratelimits import LEASE_SECONDS, Admission, LocalStore
from agentkit.toolerrors import LimitedError, SemanticError

__all__ = ["UNREACHABLE_CHOICES", "RedisStore"]

UNREACHABLE_CHOICES: Final = ("refuse", "local")
_log = logging.getLogger("agentkit.ratelimits")

# KEYS: the windows, the leases, then the pause key if ARGV[3] is 1.
# ARGV: windows, leases, has pause, lease id, lease ms, then (requests, per ms) per
# window, then the most per lease. Answer: {-1, 0} admitted, or {index, retry ms}.
_ACQUIRE: Final = """
local nw, nl = tonumber(ARGV[1]), tonumber(ARGV[2])
local id, lease_ms = ARGV[4], tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
if ARGV[3] == '1' then
  local left = redis.call('PTTL', KEYS[nw + nl + 1])
  if left > 0 then return {nw + nl, left} end
end
for i = 1, nw do
  local most, per = tonumber(ARGV[4 + 2 * i]), tonumber(ARGV[5 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - per)
  local count = redis.call('ZCARD', KEYS[i])
  if count >= most then
    local oldest = redis.call('ZRANGE', KEYS[i], count - most, count - most, 'WITHSCORES')
    return {i - 1, math.ceil(tonumber(oldest[2]) + per - now)}
  end
end
for j = 1, nl do
  local key, most = KEYS[nw + j], tonumber(ARGV[5 + 2 * nw + j])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= most then return {nw + j - 1, 1000} end
end
for i = 1, nw do
  redis.call('ZADD', KEYS[i], now, id)
  redis.call('PEXPIRE', KEYS[i], math.ceil(tonumber(ARGV[5 + 2 * i])))
end
for j = 1, nl do
  redis.call('ZADD', KEYS[nw + j], now + lease_ms, id)
  redis.call('PEXPIRE', KEYS[nw + j], lease_ms)
end
return {-1, 0}
"""
_RELEASE: Final = """
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
"""
_PAUSE: Final = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 0
"""


@final
class RedisStore:
    """Limits counted in the Redis server at ``url`` (``redis://host:port/db``)."""

    def __init__(
        self,
        url: str,
        *,
        unreachable: Literal["refuse", "local"] = "refuse",
        lease_seconds: float = LEASE_SECONDS,
        timeout: float = 0.5,
        retry_seconds: float = 5.0,
        prefix: str = "agentkit:limits:",
    ) -> None:
        try:
            import redis
        except ImportError as exc:
            raise SemanticError(
                "a Redis limits store needs the Redis client: pip install 'agentkit[redis]'"
            ) from exc
        if unreachable not in UNREACHABLE_CHOICES:
            raise SemanticError(
                f"unreachable={unreachable!r}: choose 'refuse' (refuse calls with limits) or "
                "'local' (count them in this process) for when Redis cannot be reached"
            )
        self.shown = shown_url(url)
        try:
            self._client = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except ValueError as exc:
            raise SemanticError(
                f"limits store {self.shown}: {exc}; expected redis://HOST:PORT/DB"
            ) from None
        self._errors: tuple[type[Exception], ...] = (redis.exceptions.ConnectionError,
                                                    redis.exceptions.TimeoutError)  # fmt: skip
        # A server that answers but will not keep (full, read-only): answers go unkept.
        self._refusals: tuple[type[Exception], ...] = (redis.exceptions.ResponseError,)
        self._keeping = True
        self._acquire = self._client.register_script(_ACQUIRE)
        self._release = self._client.register_script(_RELEASE)
        self._pause = self._client.register_script(_PAUSE)
        self._unreachable = unreachable
        self._lease_ms = max(1, round(lease_seconds * 1000))
        self._retry_seconds = retry_seconds
        self._prefix = prefix
        self._local = LocalStore()
        self._local_leases: set[str] = set()
        self._down_until = 0.0  # monotonic: Redis is not tried again before then
        self._lock = threading.Lock()

    def acquire(
        self,
        windows: Sequence[tuple[str, int, float]],
        leases: Sequence[tuple[str, int]],
        pause: str | None,
        lease_id: str,
    ) -> Admission:
        if not self._down():
            prefix = self._prefix
            keys = [prefix + key for key, _, _ in windows] + [prefix + key for key, _ in leases]
            args: list[Any] = [len(windows), len(leases), 1 if pause else 0, lease_id]
            args.append(self._lease_ms)
            for _, requests, per in windows:
                args += [requests, per * 1000]
            args += [most for _, most in leases]
            if pause:
                keys.append(prefix + pause)
            try:
                index, wait_ms = self._acquire(keys=keys, args=args)
            except self._errors as exc:
                self._went_down(exc)
            else:
                self._came_back()
                return (
                    Admission(refused=int(index), retry_after=int(wait_ms) / 1000)
                    if index >= 0
                    else Admission(refused=-1)
                )
        if self._unreachable == "refuse":
            raise LimitedError(
                f"the limits store {self.shown} cannot be reached, and calls with limits are "
                "refused until it can (--limits-store-unreachable refuse); nothing was sent; "
                f"retry after {max(1, round(self._retry_seconds))} s",
                scope="store",
                retry_after=float(max(1, round(self._retry_seconds))),
            )
        admission = self._local.acquire(windows, leases, pause, lease_id)
        if admission.refused < 0 and leases:
            with self._lock:
                self._local_leases.add(lease_id)
        return admission

    def release(self, leases: Sequence[str], lease_id: str) -> None:
        with self._lock:
            local = lease_id in self._local_leases
            self._local_leases.discard(lease_id)
        if local:
            self._local.release(leases, lease_id)
            return
        try:
            self._release(keys=[self._prefix + key for key in leases], args=[lease_id])
        except self._errors as exc:
            self._went_down(exc)  # the lease expires by itself

    def pause(self, key: str, seconds: float) -> None:
        if self._down():
            self._local.pause(key, seconds)
            return
        try:
            self._pause(keys=[self._prefix + key], args=[max(1, round(seconds * 1000))])
        except self._errors as exc:
            self._went_down(exc)
            self._local.pause(key, seconds)
        except self._refusals as exc:
            self._would_not_keep("a pause", exc)
        else:
            self._keeping = True

    def cache_get(self, key: str) -> bytes | None:
        """The kept answer; unreachable: none (a miss, the call runs)."""
        if self._down():
            return self._local.cache_get(key) if self._unreachable == "local" else None
        try:
            kept = self._client.get(self._prefix + key)
        except self._errors as exc:
            self._went_down(exc)
            return None
        return kept if isinstance(kept, bytes) else None

    def cache_set(self, key: str, value: bytes, ttl: float) -> None:
        if self._down():
            if self._unreachable == "local":
                self._local.cache_set(key, value, ttl)
            return
        try:
            self._client.set(self._prefix + key, value, px=max(1, round(ttl * 1000)))
        except self._errors as exc:
            self._went_down(exc)
        except self._refusals as exc:
            self._would_not_keep("an answer", exc)
        else:
            self._keeping = True

    def _would_not_keep(self, what: str, exc: Exception) -> None:
        """Redis answered but refused to write (full, read-only): logged once until it keeps."""
        if self._keeping:
            self._keeping = False
            _log.warning(
                "limits store %s could not keep %s (%s: %s): answers and upstream pauses are "
                "not kept while it refuses; give it more maxmemory",
                self.shown,
                what,
                type(exc).__name__,
                str(exc)[:200],
            )

    def close(self) -> None:
        self._client.close()

    # -- reachability -----------------------------------------------------------------------

    def _down(self) -> bool:
        return self._down_until > 0 and time.monotonic() < self._down_until

    def _went_down(self, exc: Exception) -> None:
        with self._lock:
            first = self._down_until == 0
            self._down_until = time.monotonic() + self._retry_seconds
        if first:
            then = (
                "refusing calls with limits"
                if self._unreachable == "refuse"
                else "counting limits in this process only"
            )
            _log.warning(
                "limits store %s cannot be reached (%s): %s until it answers again",
                self.shown,
                type(exc).__name__,
                then,
            )

    def _came_back(self) -> None:
        if self._down_until == 0:
            return
        with self._lock:
            self._down_until = 0.0
        _log.warning("limits store %s answers again: limits are shared again", self.shown)


def shown_url(url: str) -> str:
    """``url`` as it may be shown: scheme, host, port and database, never a password."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"
