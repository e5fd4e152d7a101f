import Foundation
import BenchTestSupport

/// TestOrigin in a process of its own, so neither client shares its threads with the server.
enum OriginProcess {
    /// Child side: serves COUNT random payloads of SIZE bytes at `/t/N.jpg`, prints `port=N`, and
    /// exits when its standard input closes.
    static func serve(count: Int, size: Int) async throws {
        let origin = try await TestOrigin.start()
        for index in 0..<count { origin.serve(Measure.payload(size), at: "/t/\(index).jpg") }
        print("port=\(origin.port)")
        fflush(nil)
        _ = FileHandle.standardInput.readDataToEndOfFile()
        try await origin.shutdown()
    }

    /// Parent side: starts the child and returns its URLs and a function that stops it.
    static func start(count: Int, size: Int) throws -> (urls: [URL], stop: () -> Void) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["serve", String(count), String(size)]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).replacingOccurrences(of: "port=", with: "")) else {
            throw BenchmarkError("origin process did not report its port")
        }
        let urls = (0..<count).map { URL(string: "http://127.0.0.1:\(port)/t/\($0).jpg")! }
        return (
            urls,
            {
                try? input.fileHandleForWriting.close()
                process.waitUntilExit()
            }
        )
    }
}
