import ArgumentParser
import Foundation
import Hummingbird
import ImagoServer
import Logging
import ServiceLifecycle
import Tracing

#if canImport(Glibc)
    import Glibc
#endif

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve imgproxy (or thumbor) URLs: fetch, resize, convert and cache images over HTTP.",
        discussion: """
            Each flag may instead come from its IMAGO_* variable, or imgproxy's own where it means the same \
            (docs/SERVER.md's table); a flag wins. SIGTERM or SIGINT stops accepting, finishes the requests in flight and exits 0.

            SETTINGS:
            \(ServerSettings.help)
            """
    )

    /// The settings, as `--flag value`, `--flag=value` or a switch alone; ServerSettings declares them.
    @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

    func run() async throws {
        let (host, port): (String, Int)
        var configuration: ServerConfiguration
        let values: [String: String]
        let environment: [String: String]
        do {
            environment = try await ConfigurationSources.environment(arguments: settings, environment: ProcessInfo.processInfo.environment)
            values = try ServerSettings.values(arguments: settings, environment: environment)
            (host, port, configuration) = try ServerSettings.configuration(values)
        } catch {
            throw ValidationError(error.message)
        }
        let log: AccessLog
        let telemetry: Telemetry
        do {
            // swift-otel's own warnings (an export that failed) go to the log's lines alone.
            let written = try AccessLog(for: configuration)
            telemetry = try Telemetry(
                configuration.telemetry, environment: environment,
                diagnostics: Logger(label: "imago-otel") { written.handler(label: $0) })
            log = try AccessLog(for: configuration, records: telemetry.logHandler)
        } catch {
            throw ValidationError(error.message)
        }
        LoggingSystem.bootstrap { label in
            guard let records = telemetry.logHandler else { return log.handler(label: label) }
            return MultiplexLogHandler([log.handler(label: label), records(label)])
        }
        if let tracer = telemetry.tracer { InstrumentationSystem.bootstrap(tracer) }
        var logger = Logger(label: "imago-serve")
        logger.logLevel = configuration.logLevel
        if !configuration.configurationSources.isEmpty {
            logger.info("variables also read from: \(configuration.configurationSources.joined(separator: ", "))")
        }
        for variable in ServerSettings.unsupportedPeerVariables(in: values) {
            logger.warning("\(variable) is not supported by Imago and is ignored (docs/SERVER.md: moving from imgproxy or thumbor)")
        }
        let unknownFilters = configuration.output.thumborFilters.subtracting(ThumborFilter.knownNames).sorted()
        if !unknownFilters.isEmpty {
            logger.warning("thumbor filters Imago does not have are skipped in URLs: \(unknownFilters.joined(separator: ", "))")
        }
        if let container = ContainerMemory.current() {
            configuration.fit(into: container, keepsMemoryBytes: values["IMAGO_MEMORY_BYTES"] != nil)
            logger.info(
                "container memory limit \(container.limit >> 20) MB: \(configuration.memoryBytes >> 20) MB kept, \((configuration.decodeMemoryBytes ?? 0) >> 20) MB for decodes and encodes, new work shed above \(Int(configuration.shedsAboveMemoryFraction * 100))%"
            )
        }
        if let storage = configuration.resultStorage {
            // Not reached at start: a store that is down is a miss per request, and the node makes the variant.
            logger.info("made variants shared through \(storage.description)")
        }
        if !configuration.signer.isEnabled {
            logger.warning("no IMAGO_KEY/IMAGO_SALT: signatures are not checked, any URL is served")
        }
        let service = try ImageService(
            configuration: configuration, metrics: ServerMetrics(mirror: telemetry.metricsFactory, namespace: configuration.prometheusNamespace),
            logger: logger, accessLog: log,
            tracer: telemetry.tracer ?? NoOpTracer())
        let memoryLogger = configuration.logsMemoryStats ? logger : nil
        let heapTrimming = HeapTrimming.start(limited: configuration.containerMemory != nil, every: configuration.trimInterval) {
            memoryLogger?.debug("memory", metadata: service.memoryStatsMetadata)
        }
        defer { heapTrimming.cancel() }
        let timeout = configuration.gracefulStopTimeout
        let socketPath = configuration.listenSocketPath
        let listener = ImageListener(
            service: service, host: host, port: port, logger: logger,
            onListening: { channel in
                // Tests and scripts read the port from this line when they asked for port 0.
                if let path = socketPath {
                    say("imago serve: listening on unix:\(path)")
                } else {
                    say("imago serve: listening on \(host):\(channel.localAddress?.port ?? port)")
                }
                // The socket is closed when a stop begins: from here on new connections are refused,
                // and what is still in flight after the graceful stop timeout is cut off by exiting
                // (as imgproxy's process ends when its shutdown context expires).
                channel.closeFuture.whenComplete { _ in
                    say("imago serve: stopped listening; the requests in flight have \(timeout.components.seconds) s to finish")
                    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds))) {
                        warn("imago serve: the graceful stop timeout passed; \(service.workInFlight + service.workQueued) images still in flight are cut off")
                        Foundation.exit(0)
                    }
                }
            }
        )
        var services = telemetry.services
        if let metrics = configuration.metricsAddress {
            // /metrics on its own address (imgproxy's IMGPROXY_PROMETHEUS_BIND), kept private there.
            let host = metrics.host.isEmpty ? "0.0.0.0" : metrics.host
            services.append(
                Application(
                    router: ImageServer.metricsRouter(service: service),
                    configuration: ApplicationConfiguration(address: .hostname(host, port: metrics.port), serverName: ImageServer.serverName),
                    onServerRunning: { channel in say("imago serve: metrics on \(host):\(channel.localAddress?.port ?? metrics.port)") },
                    logger: logger))
        }
        // Services stop in reverse order: the exporters last, sending what the last requests made.
        let group = ServiceGroup(
            configuration: .init(services: services + [listener], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        // The requests in flight are answered: what the service keeps is let go before exit.
        await service.shutDown()
    }
}
