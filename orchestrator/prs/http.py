"""The one place that speaks HTTP to a forge: JSON requests with rate-limit etiquette.

Every forge plugin goes through :class:`ApiClient`, so retries, ``Retry-After`` and the
rate-limit headers of GitHub (``x-ratelimit-*``) and GitLab (``RateLimit-*``) are honoured the
same way everywhere, waits are bounded, and the token never leaves the request headers.
"""

from __future__ import annotations

import email.utils
import json
import sys
import time
import urllib.error
import urllib.parse
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from npu_codemod.orchestrator.redact import mask_secrets

if TYPE_CHECKING:
    import urllib.request

USER_AGENT = "npu-codemod"
#: Statuses worth another try: rate limits and transient server trouble.
_RETRY_STATUSES = frozenset({403, 429, 500, 502, 503, 504})
#: GitHub's words for a secondary rate limit (a 403 that may come without any header).
_SECONDARY = ("secondary rate limit", "abuse detection", "abuse rate limit")
#: Until when (clock time) each forge host asked everyone to wait: a rate limit one client
#: meets holds for every client of that host in this process (all repositories' PRs).
_COOLDOWNS: dict[str, float] = {}
#: Attempts in a row that got no answer at all (refused, timed out), per forge host, over
#: every client of this process: at :data:`MAX_SILENT` the host is given up for the run.
_SILENT: dict[str, int] = {}
MAX_SILENT = 4


class ForgeError(Exception):
    """A forge refused or failed a request: one sentence, never holding the token."""

    def __init__(self, message: str, status: Optional[int] = None, payload: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.payload = payload


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]  # lower-case names
    data: Any
    where: str = ""  # "METHOD url" of the request, for errors
    is_json: bool = True  # False: the body was not JSON (an HTML error page, say); data is None

    def object(self, *keys: str) -> dict[str, Any]:
        """The JSON object answered, holding ``keys``; ForgeError (one line) otherwise."""
        if not isinstance(self.data, dict):
            raise self.unexpected("a JSON object")
        missing = [key for key in keys if self.data.get(key) is None]
        if missing:
            raise self.unexpected(f"an object with {', '.join(missing)}")
        return self.data

    def objects(self) -> list[dict[str, Any]]:
        """The JSON list of objects answered; ForgeError (one line) otherwise."""
        if not isinstance(self.data, list) or not all(isinstance(item, dict) for item in self.data):
            raise self.unexpected("a JSON list of objects")
        return self.data

    def unexpected(self, wanted: str) -> ForgeError:
        return ForgeError(f"{self.where}: HTTP {self.status} with {_shape(self)}, not {wanted} "
                          "as the forge's API answers", self.status)


def _shape(response: Response) -> str:
    """What a body was, in a few words (never its text: an HTML page may say anything)."""
    if not response.is_json:
        kind = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
        return f"a body that is not JSON ({kind})"
    data = response.data
    if isinstance(data, dict):
        return f"an object with {', '.join(sorted(map(str, data))[:5]) or 'no fields'}"
    return {list: "a list", str: "a string", type(None): "no body"}.get(type(data), f"a {type(data).__name__}")


@dataclass
class RetryPolicy:
    """How long to wait for the forge: at most ``attempts`` tries, no single wait over ``max_wait``."""

    attempts: int = 4
    max_wait: float = 60.0
    backoff: float = 1.0  # first wait for a 5xx or a refused connection, doubled each time
    secondary_wait: float = 60.0  # a secondary rate limit without Retry-After (GitHub: "a minute")
    timeout: float = 60.0  # seconds one request may take (connect, then each read)


class ApiClient:
    """JSON over HTTP(S) against one API root, with bounded, header-driven retries."""

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        policy: Optional[RetryPolicy] = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        self.policy = policy or RetryPolicy()
        self._sleep, self._clock, self._log = sleep, clock, log

    def request(self, method: str, path: str, params: Optional[Mapping[str, Any]] = None,
                body: Any = None) -> Response:
        """Send one request (retrying as the forge asks); ForgeError for any final non-2xx."""
        url = self.base_url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        self._give_up_if_silent(method, path)
        if _SILENT.get(self._host):  # the back-off the previous request of any client reached
            self._log(f"npu-codemod: {self._where(method, path)}: waiting {_seconds(self._silent_wait())} "
                      "for the forge to answer again")
            self._sleep(self._silent_wait())
        for attempt in range(1, self.policy.attempts + 1):
            self._give_up_if_silent(method, path)
            self._cool_down(method, path)
            response = self._send(method, url, body)
            _SILENT[self._host] = _SILENT.get(self._host, 0) + 1 if response.status == 0 else 0
            wait = self._retry_wait(response, attempt)
            if wait is None:
                break
            self._log(f"npu-codemod: {self._where(method, path)}: {self._why(response)}; "
                      f"retrying in {_seconds(wait)}")
            if response.status in (403, 429):  # the host's limit: every client waits it out
                _COOLDOWNS[self._host] = max(_COOLDOWNS.get(self._host, 0.0), self._clock() + wait)
            self._sleep(wait)
        response = replace(response, where=self._where(method, path))
        if 200 <= response.status < 300 and not response.is_json and response.status != 204:
            raise response.unexpected("JSON")
        if 200 <= response.status < 300:
            return response
        raise ForgeError(f"{self._where(method, path)}: {_describe(response)}{self._over_cap(response)}",
                         response.status, response.data)

    def _give_up_if_silent(self, method: str, path: str) -> None:
        silent = _SILENT.get(self._host, 0)
        if silent >= MAX_SILENT:
            raise ForgeError(f"{self._where(method, path)}: not sent: the forge gave no answer "
                             f"{silent} times in a row this run (timeouts or refused "
                             "connections); no more requests to it until the next run")

    def _over_cap(self, response: Response) -> str:
        """Why a retry was not waited out: the forge asked for longer than the cap, or it has
        not answered too often this run."""
        if response.status == 0 and _SILENT.get(self._host, 0) >= MAX_SILENT:
            return (f"; the forge gave no answer {MAX_SILENT} times in a row this run: no more "
                    "requests to it until the next run")
        if response.status not in _RETRY_STATUSES or "retry-after" not in response.headers:
            return ""
        asked = _retry_after(response.headers["retry-after"], self._clock())
        if asked <= self.policy.max_wait:
            return ""
        return (f"; the forge asked to retry after {_seconds(asked)}, longer than the "
                f"{_seconds(self.policy.max_wait)} npu-codemod waits: rerun later")

    @property
    def _host(self) -> str:
        return urllib.parse.urlsplit(self.base_url).netloc

    def _cool_down(self, method: str, path: str) -> None:
        """Wait while the host's rate limit, met by any client, lasts."""
        wait = _COOLDOWNS.get(self._host, 0.0) - self._clock()
        if wait > 0:
            self._log(f"npu-codemod: {self._where(method, path)}: waiting {_seconds(wait)} for the "
                      "forge's rate limit")
            self._sleep(wait)

    def _send(self, method: str, url: str, body: Any) -> Response:
        """One request, following a redirect only within the API root's origin (the headers
        hold the token: they never go to another scheme, host or port)."""
        for _ in range(_MAX_REDIRECTS + 1):
            response = self._send_once(method, url, body)
            target = _redirect_target(url, response)
            if target is None:
                return response
            if not _same_origin(url, target):
                return Response(response.status, response.headers, {"message": _refused(target)})
            if not _may_follow(method, response.status):
                return Response(response.status, response.headers, {
                    "message": f"moved to {mask_secrets(target)}: set --forge-url to the new place"})
            url = target
        return Response(response.status, response.headers,
                        {"message": f"more than {_MAX_REDIRECTS} redirects"})

    def _send_once(self, method: str, url: str, body: Any) -> Response:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        import http.client
        import urllib.request  # here: with ssl, a tenth of a command's start-up, for PRs alone

        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with _opener().open(request, timeout=self.policy.timeout) as reply:
                return _response(reply.status, reply.headers, reply.read())
        except urllib.error.HTTPError as exc:
            return _response(exc.code, exc.headers, exc.read())
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            return Response(0, {}, {"message": f"cannot reach {mask_secrets(self.base_url)}: {reason}"})

    def _retry_wait(self, response: Response, attempt: int) -> Optional[float]:
        """Seconds to wait before trying again, or None when this answer is final."""
        if attempt >= self.policy.attempts or not (response.status == 0 or response.status in _RETRY_STATUSES):
            return None
        if response.status == 0 and _SILENT.get(self._host, 0) >= MAX_SILENT:
            return None  # given up for the run: _over_cap says so
        headers = response.headers
        if "retry-after" in headers:
            wait = _retry_after(headers["retry-after"], self._clock())
        elif _remaining(headers) == "0" and (reset := _reset(headers)) is not None:
            wait = max(0.0, float(reset) - self._clock()) + 1.0
        elif response.status == 403 and _is_secondary_limit(response):
            wait = self.policy.secondary_wait
        elif response.status == 403:
            return None  # a plain permission refusal: asking again will not help
        elif response.status == 0:  # one back-off per host, over every client of the run
            wait = self._silent_wait()
        else:
            wait = self.policy.backoff * 2 ** (attempt - 1)
        return wait if wait <= self.policy.max_wait else None

    def _silent_wait(self) -> float:
        """The host's back-off: doubled with each attempt in a row it did not answer."""
        return min(self.policy.max_wait, self.policy.backoff * 2 ** max(0, _SILENT.get(self._host, 0) - 1))

    def _where(self, method: str, path: str) -> str:
        return f"{method} {mask_secrets(self.base_url)}{path.split('?')[0]}"

    @staticmethod
    def _why(response: Response) -> str:
        if response.status == 403 and _is_secondary_limit(response):
            return "secondary rate limit (HTTP 403)"
        if response.status in (403, 429):
            return f"rate limited (HTTP {response.status})"
        return _describe(response)


@lru_cache(maxsize=1)
def _opener() -> urllib.request.OpenerDirector:
    """urllib's opener with every 3xx handed back to :meth:`ApiClient._send` (urllib would
    re-send all headers, the token included, to wherever ``Location`` points)."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirects())


_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_REDIRECTS = 5


def _redirect_target(url: str, response: Response) -> Optional[str]:
    """The absolute URL a 3xx answer points to, or None when it is no redirect."""
    location = response.headers.get("location")
    if response.status not in _REDIRECTS or not location:
        return None
    try:
        return urllib.parse.urljoin(url, location)
    except ValueError:  # not a URL: an origin of its own, refused
        return location


def _origin(url: str) -> tuple[str, str, Optional[int]]:
    """(scheme, host, port) of ``url``; an unusable URL is no origin at all (never followed)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return "", "", -1
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _same_origin(url: str, target: str) -> bool:
    return _origin(url) == _origin(target)


def _may_follow(method: str, status: int) -> bool:
    """A 301/302/303 turns a write into a GET in browsers: only 307/308 keep a write's method."""
    return method in ("GET", "HEAD") or status in (307, 308)


def _refused(target: str) -> str:
    scheme, host, port = _origin(target)
    return (f"the forge redirected to {scheme}://{host}:{port}, another origin than the API URL; "
            "not followed (the token is never sent elsewhere): set --forge-url to the forge's "
            "real API URL")


def _response(status: int, headers: Any, raw: bytes) -> Response:
    lowered = {name.lower(): value for name, value in (headers or {}).items()}
    try:
        data = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, json.JSONDecodeError):  # never copied: an error page says anything
        return Response(status, lowered, None, is_json=False)
    return Response(status, lowered, data)


def _is_secondary_limit(response: Response) -> bool:
    message = response.data.get("message") if isinstance(response.data, dict) else None
    return isinstance(message, str) and any(words in message.lower() for words in _SECONDARY)


def _remaining(headers: Mapping[str, str]) -> Optional[str]:
    return headers.get("x-ratelimit-remaining", headers.get("ratelimit-remaining"))


def _reset(headers: Mapping[str, str]) -> Optional[str]:
    value = headers.get("x-ratelimit-reset", headers.get("ratelimit-reset"))
    return value if value and value.strip().isdigit() else None


def _retry_after(value: str, now: float) -> float:
    """``Retry-After`` is either seconds or an HTTP date."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return 1.0


def _describe(response: Response) -> str:
    """The forge's own words for a failed request (GitHub ``message``/``errors``, GitLab ``message``/``error``)."""
    if response.status == 0:
        return str(response.data["message"])
    if not response.is_json:
        return f"HTTP {response.status} ({_shape(response)})"
    data = response.data if isinstance(response.data, dict) else {}
    message = data.get("message") or data.get("error") or ""
    if isinstance(message, (list, dict)):
        message = json.dumps(message, ensure_ascii=False)
    errors = data.get("errors")
    details = [e.get("message") or e.get("code") for e in errors if isinstance(e, dict)] \
        if isinstance(errors, list) else []
    text = " ".join("; ".join(str(part) for part in [message, *details] if part).split())
    text = text if len(text) <= 300 else text[:299] + "…"
    return mask_secrets(f"HTTP {response.status}" + (f": {text}" if text else ""))


def _seconds(wait: float) -> str:
    return f"{wait:.0f}s" if wait >= 1 else f"{wait:.1f}s"
