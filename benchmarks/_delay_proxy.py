"""A TCP proxy that holds every chunk `delay` seconds in each direction, in order: a database "across
the network" on one machine (benchmarks/reads.py; tc netem is not available in every container).

    python -m benchmarks._delay_proxy <listen port> <target port> <delay seconds>

asyncio's timers have about a millisecond of granularity, so the round trip it adds is coarser than
the delay asked: the benchmark measures and prints the round trip it got.
"""

from __future__ import annotations

import asyncio
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    loop = asyncio.get_running_loop()
    held: asyncio.Queue[tuple[bytes, float]] = asyncio.Queue()

    async def forward() -> None:
        while True:
            data, due = await held.get()
            if not data:
                writer.close()
                return
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(forward())
    try:
        while data := await reader.read(65536):
            held.put_nowait((data, loop.time() + delay))
    finally:
        held.put_nowait((b"", 0.0))
        await sender


async def _serve(listen: int, target: int, delay: float) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(_pipe(reader, up_writer, delay), _pipe(up_reader, writer, delay), return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    print("ready", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))
