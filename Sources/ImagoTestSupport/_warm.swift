import NIOPosix; import NIOHTTP1; import NIOSSL
