"""A deterministic web-server log: combined-log-style lines and the values each was made
from, for checking classification grok field by field.

Every :data:`BAD_EVERY`-th line is broken (cut short, garbled, or a value out of its
type's range) and must land in ``_corrupt_record``.
"""

from __future__ import annotations

import datetime as dt
import random

#: The pattern: Glue's built-ins under custom patterns that refer to each other.
CUSTOM_PATTERNS = "\n".join(
    [
        "# a combined log with a cache flag, the worker and the latency at the end",
        r"REQUESTLINE %{WORD:verb} %{URIPATHPARAM:request} HTTP/%{NUMBER:httpversion:float}",
        r"SIZE (?:%{INT:bytes:long}|-)",
        r"LATENCY %{NUMBER}",
        r"WEBLOG %{IPORHOST:clientip} %{USER:ident} %{USER:auth} \[%{HTTPDATE:timestamp}\] "
        r'"%{REQUESTLINE}" %{INT:response:int} %{SIZE} %{QS:referrer} %{QS:agent} '
        r"%{BOOLEAN:cached:boolean} %{POSINT:worker:short} %{LATENCY:latency_ms:double}",
    ]
)
PATTERN = "%{WEBLOG}"
COLUMNS = (
    "clientip", "ident", "auth", "timestamp", "verb", "request", "httpversion", "response",
    "bytes", "referrer", "agent", "cached", "worker", "latency_ms",
)  # fmt: skip
BAD_EVERY = 53

_VERBS = ("GET", "POST", "PUT", "DELETE", "HEAD")
_AGENTS = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)",
    "curl/8.4.0",
    'Go-http-client/1.1 "quoted"',
)
T0 = dt.datetime(2026, 11, 26, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=-7)))


def _client(rng: random.Random, i: int) -> str:
    kind = i % 10
    if kind == 7:
        return f"2001:db8::{rng.randrange(1, 0xFFFF):x}"
    if kind == 8:
        return f"host-{rng.randrange(100)}.example.com"
    return ".".join(str(rng.randrange(256)) for _ in range(4))


def _bad(rng: random.Random, line: str, i: int) -> str:
    kind = (i // BAD_EVERY) % 3
    if kind == 0:
        return line[: rng.randrange(10, len(line) - 10)]  # cut short
    if kind == 1:
        return "GARBAGE " + line[::-1]
    return line.rsplit(" ", 3)[0] + " true 99999 1.5"  # worker 99999 does not fit a short


def weblog(n: int = 1_200, seed: int = 7) -> tuple:
    """``(lines, expected)``: ``expected[i]`` is the dict of column values line ``i`` was
    made from (strings as captured, typed values typed), or None for a broken line."""
    rng = random.Random(seed)
    lines, expected = [], []
    for i in range(n):
        stamp = T0 + dt.timedelta(seconds=i * 7)
        path = f"/shop/item/{rng.randrange(10_000)}" + (f"?q={i}&page=2" if i % 3 == 0 else "")
        size = None if i % 11 == 0 else rng.randrange(0, 5_000_000_000)
        referrer = '"-"' if i % 4 == 0 else f'"https://ref.example.org/p/{i}"'
        values = {
            "clientip": _client(rng, i),
            "ident": "-",
            "auth": "-" if i % 5 else f"user.{i % 37}",
            "timestamp": stamp.strftime("%d/%b/%Y:%H:%M:%S %z"),
            "verb": _VERBS[i % len(_VERBS)],
            "request": path,
            "httpversion": (1.0, 1.1, 2.0)[i % 3],
            "bytes": size,
            "response": (200, 201, 304, 404, 500)[i % 5],
            "referrer": referrer,
            "agent": f'"{_AGENTS[i % len(_AGENTS)].replace(chr(34), chr(92) + chr(34))}"',
            "cached": i % 2 == 0,
            "worker": 1 + i % 40,
            "latency_ms": round(rng.uniform(0.1, 900.0), 3),
        }
        line = (
            f"{values['clientip']} {values['ident']} {values['auth']} [{values['timestamp']}] "
            f'"{values["verb"]} {path} HTTP/{values["httpversion"]}" {values["response"]} '
            f"{'-' if size is None else size} {referrer} {values['agent']} "
            f"{('true', 'false', 'TRUE', 'False')[i % 4]} "
            f"{values['worker']} {values['latency_ms']}"
        )
        if i % BAD_EVERY == BAD_EVERY - 1:
            lines.append(_bad(rng, line, i))
            expected.append(None)
        else:
            lines.append(line + ("\n" if i % 6 == 0 else ""))
            expected.append(values)
    return lines, expected
