"""A TCP relay on 127.0.0.1 that holds every chunk for a fixed time in each direction, as
`tc netem delay` would (that qdisc is missing on the build machines): `latency_relay.py LISTEN
TARGET ONE_WAY_MS`. Order is kept, bandwidth is not limited. Prints `ready` once it listens."""

import asyncio
import sys


async def pump(reader, writer, delay, first_extra=0.0):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    delivering = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((loop.time() + delay + first_extra, data))
            first_extra = 0.0
            if not data:
                break
        await delivering
    except (ConnectionError, OSError):
        delivering.cancel()


async def main():
    listen, target, one_way = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) / 1000

    async def accepted(client_reader, client_writer):
        try:
            origin_reader, origin_writer = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, origin_writer, one_way, 2 * one_way), pump(origin_reader, client_writer, one_way))
        origin_writer.close()
        client_writer.close()

    server = await asyncio.start_server(accepted, "127.0.0.1", listen)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
