import Hummingbird
import ImagoServer

// An application that already runs Hummingbird, with the image service mounted on its own router
// at /images: its own settings (here a host allow-list and a preset) and its own metrics, exposed
// on a route of the app's choosing. `swift run imago-embedded-example`, then
// curl http://127.0.0.1:8080/images/_/pr:thumb/plain/https://images.example.com/cat.jpg
var settings = ServerConfiguration()
settings.allowedHosts = ["images.example.com"]
settings.presets["thumb"] = ["rs:fill:200:200", "g:sm"]
let service = try ImageService(configuration: settings, metrics: ServerMetrics())

let router = Router()
router.get("/") { _, _ in "my app\n" }
router.get("/images-metrics") { _, _ in service.metrics.exposition() }
ImageServer.mount(service, on: router, at: "/images")

let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
try await app.runService()
