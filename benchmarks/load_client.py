"""The load benchmark's client (``benchmarks/load.py``): asyncio with raw HTTP/1.1 on loopback, a
new connection per request, and the annotators it drives."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import numpy as np

from benchmarks.load_seed import Seeded

REQUEST_TIMEOUT = 60.0


@dataclass
class Answer:
    status: int
    body: Any
    seconds: float


class Client:
    """HTTP/1.1 on loopback, one connection per request (gunicorn's sync workers close it)."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.host_header = f"{self.host}:{self.port}"
        self.latencies: dict[str, list[float]] = {}
        # (kind, perf_counter at the send, seconds to the answer) of every answered request.
        self.sent: list[tuple[str, float, float]] = []
        self.errors: list[str] = []

    async def request(
        self, kind: str, method: str, path: str, token: str | None = None, body: Any = None
    ) -> Answer | None:
        payload = b"" if body is None else json.dumps(body).encode()
        head = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host_header}",
            # As the TLS-terminating proxy in front of gunicorn forwards it.
            "X-Forwarded-Proto: https",
            "Connection: close",
            "Accept: application/json",
        ]
        if token:
            head.append(f"Authorization: Token {token}")
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        raw = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        started = time.perf_counter()
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                status, data = await self._exchange(raw)
        except (TimeoutError, OSError, ValueError) as exc:
            self.errors.append(f"{kind}: {method} {path}: {type(exc).__name__}: {exc}")
            return None
        seconds = time.perf_counter() - started
        self.latencies.setdefault(kind, []).append(seconds)
        self.sent.append((kind, started, seconds))
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = data[:200].decode(errors="replace")
        return Answer(status, parsed, seconds)

    def clear(self) -> None:
        self.latencies.clear()
        self.sent.clear()

    async def _exchange(self, raw: bytes) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        transport, _ = await loop.create_connection(
            lambda: _Exchange(raw, answered), self.host, self.port
        )
        try:
            return await answered
        finally:
            transport.close()


class _Exchange(asyncio.Protocol):
    """One request on a new connection, its answer read as it arrives: a protocol instead of
    asyncio's streams, which cost the client (on the server's cores) about twice the CPU."""

    def __init__(self, raw: bytes, answered: asyncio.Future[tuple[int, bytes]]) -> None:
        self.raw = raw
        self.answered = answered
        self.received = bytearray()
        self.status = 0
        self.body_at = -1  # where the body starts, once the head is in
        self.length: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but write the same way.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.raw)

    def data_received(self, data: bytes) -> None:
        self.received += data
        if self.body_at < 0:
            end = self.received.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.received[:end].decode("latin-1").split("\r\n")
            self.status = int(lines[0].split()[1])
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    self.length = int(value)
            self.body_at = end + 4
        if self.length is not None and len(self.received) >= self.body_at + self.length:
            self._answer()
            # Closed at once, as a proxy does once an answer is in: after answering, gunicorn's
            # sync worker waits for the client to close (``close_graceful``) before it accepts
            # the next connection, so a close left for the awaiting task holds the worker.
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.answered.done():
            return
        if exc is not None:
            self.answered.set_exception(exc)
        elif self.body_at < 0 or self.length is not None:
            self.answered.set_exception(ValueError("the connection closed before the answer"))
        else:
            self._answer()  # no length: the body runs to the end of the connection

    def _answer(self) -> None:
        if not self.answered.done():
            body = bytes(self.received[self.body_at :])
            if self.length is not None:
                body = body[: self.length]
            self.answered.set_result((self.status, body))


@dataclass
class Outcomes:
    """What the annotators sent and how each was answered."""

    acknowledged: list[tuple[int, int, str, int]] = field(default_factory=list)
    repeats: Counter[str] = field(default_factory=Counter)
    stales: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    takes: int = 0
    # perf_counter when the run started and when each annotator stopped.
    started: float = 0.0
    finished: list[float] = field(default_factory=list)


async def annotate(
    client: Client,
    seeded: Seeded,
    user_id: int,
    token: str,
    *,
    items: int,
    flow: str,
    repeat: float,
    stale: float,
    rng: np.random.Generator,
    outcomes: Outcomes,
    think: float = 0.0,
    pace: float = 0.0,
) -> None:
    """One annotator: take a task, answer ``items`` items, with repeats and stale submits,
    pausing ``think`` seconds on average (exponentially distributed) before each answer. With
    ``pace``, answers are due at a steady rate instead: the gaps between due times are
    exponential with mean ``pace`` seconds, counted from the last due time (not from the last
    answer), and an answer already due when the item arrives goes at once."""
    take_path = f"/api/protocols/{seeded.config_id}/take/"
    taken = await take(client, take_path, token, outcomes)
    done = 0
    # The next flow: the item the last submit's answer carried (None: read the current one).
    shown: dict[str, Any] | None = None
    due = time.perf_counter()
    while taken is not None and done < items:
        due = await pause(rng, think=think, pace=pace, due=due)
        assignment, task_position = taken
        base = f"/api/assignments/{assignment}"
        if flow in ("page", "next"):
            if shown is None:
                current = await read_current(client, base, token, outcomes)
                if current is None:
                    return
                shown = current.body
            item_id = int(shown["item"])
            output_ids = [int(o["id"]) for o in shown["outputs"]]
            criteria = [(c["key"], int(c["min"]), int(c["max"])) for c in shown["criteria"]]
        else:
            item_id, output_ids = seeded.tasks[task_position][
                done % len(seeded.tasks[task_position])
            ]
            criteria = seeded.criteria
        submission = str(uuid.uuid4())
        body = answer_body(
            item_id,
            submission,
            output_ids,
            criteria,
            rng,
            spans=seeded.spans,
            categories=seeded.categories,
        )
        answer = await client.request("submit", "POST", f"{base}/submit/", token, body)
        if answer is None:
            return
        if answer.status != 201 or not answer.body.get("created"):
            outcomes.unexpected.append(f"submit: {answer.status} {answer.body}")
            return
        judgment = int(answer.body["judgment"])
        outcomes.acknowledged.append((user_id, item_id, submission, judgment))
        done += 1
        finished = bool(answer.body["finished"])
        shown = answer.body.get("next") if flow == "next" else None
        if flow == "next" and not finished and not isinstance(shown, dict):
            outcomes.unexpected.append(f"submit without the next item: {answer.body}")
            return
        roll = rng.random()
        if roll < repeat:
            await submit_repeat(client, base, token, body, judgment, shown, flow, outcomes)
        elif roll < repeat + stale:
            await submit_stale(client, base, token, body, outcomes)
        if finished:
            # The position within the next task restarts at 0.
            items -= done
            done = 0
            shown = None
            if items > 0:
                taken = await take(client, take_path, token, outcomes)


async def take(
    client: Client, take_path: str, token: str, outcomes: Outcomes
) -> tuple[str, int] | None:
    """A task taken: the assignment's id and the task's position; None when refused."""
    answer = await client.request("take", "POST", take_path, token)
    outcomes.takes += 1
    if answer is None or answer.status != 200:
        outcomes.unexpected.append(f"take: {answer and answer.status} {answer and answer.body}")
        return None
    return str(answer.body["id"]), int(answer.body["task"]) - 1


async def pause(rng: np.random.Generator, *, think: float, pace: float, due: float) -> float:
    """Wait before the next answer (``think`` or ``pace``, see ``annotate``); the new due
    time."""
    if think > 0:
        await asyncio.sleep(rng.exponential(think))
    if pace > 0:
        due += rng.exponential(pace)
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
    return due


async def read_current(client: Client, base: str, token: str, outcomes: Outcomes) -> Answer | None:
    """The assignment's current item (``GET …/current/``); None when it did not come."""
    current = await client.request("current", "GET", f"{base}/current/", token)
    if current is not None and current.status != 200:
        outcomes.unexpected.append(f"current: {current.status} {current.body}")
        return None
    return current


def answer_body(
    item_id: int,
    submission: str,
    output_ids: list[int],
    criteria: list[tuple[str, int, int]],
    rng: np.random.Generator,
    *,
    spans: bool = False,
    categories: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A submit of a random valid answer to the item, based on revision 0; with ``spans``, each
    output also gets none, one or two error spans over its first characters (every text is
    longer than two), each in one of ``categories`` where the kind has them."""
    answer: dict[str, dict[str, Any]] = {
        str(o): {key: int(rng.integers(low, high + 1)) for key, low, high in criteria}
        for o in output_ids
    }
    if spans:
        for scores in answer.values():
            marked = int(rng.integers(0, 3))
            scores["spans"] = [
                {"start": i, "end": i + 1, "severity": ("minor", "major")[int(rng.integers(2))]}
                for i in range(marked)
            ]
            for span in scores["spans"] if categories else ():
                span["category"] = categories[int(rng.integers(len(categories)))]
    return {"item": item_id, "revision": 0, "submission_id": submission, "answer": answer}


async def submit_repeat(
    client: Client,
    base: str,
    token: str,
    body: dict[str, Any],
    judgment: int,
    shown: dict[str, Any] | None,
    flow: str,
    outcomes: Outcomes,
) -> None:
    """The submit just acknowledged sent again; its answer counted in ``outcomes.repeats``."""
    # The same request again (a double click, a retry after a lost response).
    again = await client.request("repeat", "POST", f"{base}/submit/", token, body)
    if again is None:
        outcomes.repeats["no answer"] += 1
    elif (
        again.status == 200
        and again.body.get("replay") is True
        and again.body.get("created") is False
        and again.body.get("judgment") == judgment
        and (flow != "next" or again.body.get("next") == shown)
    ):
        outcomes.repeats["200 replay of the same judgment"] += 1
    else:
        outcomes.repeats[f"{again.status} {again.body}"] += 1


async def submit_stale(
    client: Client, base: str, token: str, body: dict[str, Any], outcomes: Outcomes
) -> None:
    """A different answer to the item just answered, on its revision 0; its answer counted in
    ``outcomes.stales``."""
    # Another window still showing the item before it was answered sends its own answer.
    other = dict(body, submission_id=str(uuid.uuid4()))
    refused = await client.request("stale", "POST", f"{base}/submit/", token, other)
    if refused is None:
        outcomes.stales["no answer"] += 1
    elif refused.status == 409 and refused.body.get("code") == "stale":
        outcomes.stales["409 stale"] += 1
    else:
        outcomes.stales[f"{refused.status} {refused.body}"] += 1


async def reference_run(client: Client, *, concurrency: int, requests: int) -> float:
    """``requests`` GETs of /healthz, ``concurrency`` at a time; the wall time."""
    remaining = [requests]
    bad: list[int] = []

    async def one() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            answer = await client.request("healthz", "GET", "/healthz")
            if answer is not None and answer.status != 200:
                bad.append(answer.status)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(concurrency)))
    wall = time.perf_counter() - started
    client.errors += [f"healthz answered {s}" for s in bad]
    return wall


async def warm_up(client: Client, seeded: Seeded, *, workers: int) -> None:
    """Requests through every worker before measuring: each imports the API's modules and opens
    its connections on its first request, which /healthz (answered by a middleware) skips."""
    token = seeded.tokens[0][1]

    async def one() -> None:
        for _ in range(5):
            await client.request("warm-up", "GET", "/api/my/tasks/", token)
            await client.request("warm-up", "GET", "/healthz")

    await asyncio.gather(*(one() for _ in range(2 * workers)))
    client.clear()
    if client.errors:
        raise SystemExit(f"the warm-up failed: {client.errors[:3]}")


async def load_run(
    client: Client,
    seeded: Seeded,
    *,
    items: int,
    flow: str,
    repeat: float,
    stale: float,
    rng_seed: int,
    think: float = 0.0,
    pace: float = 0.0,
) -> tuple[Outcomes, float]:
    outcomes = Outcomes()
    rngs = np.random.default_rng(rng_seed).spawn(len(seeded.tokens))
    started = outcomes.started = time.perf_counter()

    async def noted(annotator: Awaitable[None]) -> None:
        try:
            await annotator
        finally:
            outcomes.finished.append(time.perf_counter())

    await asyncio.gather(
        *(
            noted(
                annotate(
                    client,
                    seeded,
                    user_id,
                    token,
                    items=items,
                    flow=flow,
                    repeat=repeat,
                    stale=stale,
                    rng=rng,
                    outcomes=outcomes,
                    think=think,
                    pace=pace,
                )
            )
            for (user_id, token), rng in zip(seeded.tokens, rngs, strict=True)
        )
    )
    return outcomes, time.perf_counter() - started
