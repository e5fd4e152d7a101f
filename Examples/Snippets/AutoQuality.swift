import Foundation
import Imago

func autoQuality(image: Image) throws {
    // snippet: autoquality
    let search = AutoQuality(.ssimulacra2(target: 75), minQuality: 30, maxQuality: 95)
    let choice = try search.encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
    // choice.data: the JPEG; choice.quality: e.g. 68; choice.score: ≥ 74.5; choice.encodes: 2…8
    // end snippet
    print(choice.quality, choice.score ?? 0, choice.data.count)
}
