"""A fake Claude API for the service benchmarks, run as its own process by bench_service.py.

Two scripts for every `POST /v1/messages`, built from tests/support/fake_claude.py's events:
- `stall`: `message_start`, then a `ping` every `--ping` seconds for `--stall` seconds (an
  answer that is running but silent), then a one-word answer;
- `paced`: `message_start`, a first text delta, a pause of `--lead` seconds, then `--deltas`
  text deltas every `--interval` seconds, each carrying its send time as ` T<unix time>`.
`GET /stats` answers `{"requests", "open", "deltas"}`. It prints `PORT <n>` once listening
on 127.0.0.1 and exits after `--lifetime` seconds or on SIGTERM, whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import contextlib

from tests.support.fake_claude import message_end, message_start  # noqa: E402


def frame(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def text_start() -> dict[str, Any]:
    return {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }


def text_delta(text: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }


def text_end() -> list[dict[str, Any]]:
    return [{"type": "content_block_stop", "index": 0}, *message_end("end_turn")]


class Fake:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.requests = 0
        self.open = 0
        self.deltas = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            length = 0
            for line in head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length:
                await asyncio.wait_for(reader.readexactly(length), 30)
            if request_line.startswith("GET /stats"):
                body = json.dumps(
                    {"requests": self.requests, "open": self.open, "deltas": self.deltas}
                ).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"connection: close\r\ncontent-length: %d\r\n\r\n" % len(body) + body
                )
            elif request_line.startswith("POST /v1/messages"):
                self.requests += 1
                self.open += 1
                try:
                    # Chunked, as the real API streams: the client parses each event as it comes.
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                        b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                    )
                    await self.reply(writer)
                    writer.write(b"0\r\n\r\n")
                finally:
                    self.open -= 1
            else:
                writer.write(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                )
            await asyncio.wait_for(writer.drain(), 30)
        except (
            OSError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            TimeoutError,
            ValueError,
        ):
            pass  # the app went away or sent nonsense: this answer just ends
        except asyncio.CancelledError:
            pass  # shutting down: every open answer just ends
        finally:
            writer.close()

    async def send(self, writer: asyncio.StreamWriter, *events: dict[str, Any]) -> None:
        data = b"".join(frame(e) for e in events)
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await asyncio.wait_for(writer.drain(), 30)

    async def reply(self, writer: asyncio.StreamWriter) -> None:
        o = self.options
        await self.send(writer, message_start())
        if o.mode == "stall":
            end = time.monotonic() + o.stall
            while (left := end - time.monotonic()) > 0:
                await asyncio.sleep(min(o.ping, left))
                await self.send(writer, {"type": "ping"})
            await self.send(writer, text_start(), text_delta("Done."), *text_end())
            return
        await self.send(writer, text_start(), text_delta("Warm-up."))
        await asyncio.sleep(o.lead)
        start = time.monotonic()
        for i in range(o.deltas):
            await asyncio.sleep(max(0.0, start + i * o.interval - time.monotonic()))
            # No trailing space: the app holds a block's trailing whitespace back.
            await self.send(writer, text_delta(f" T{time.time():.6f}"))
            self.deltas += 1
        await self.send(writer, *text_end())


async def main(options: argparse.Namespace) -> None:
    fake = Fake(options)
    server = await asyncio.start_server(fake.handle, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), options.lifetime)
    server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mode", choices=("stall", "paced"), required=True)
    parser.add_argument("--stall", type=float, default=300.0)
    parser.add_argument("--ping", type=float, default=10.0)
    parser.add_argument("--lead", type=float, default=2.0)
    parser.add_argument("--deltas", type=int, default=60)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--lifetime", type=float, default=1800.0)
    asyncio.run(main(parser.parse_args()))
