import Foundation
import Imago

func keepGainMap(data: Data) throws -> Data {
    // snippet: gain-maps
    var options = DecodingOptions()
    options.gainMapHandling = .keep
    let photo = try JPEGDecoder().decode(data, options: options)
    let thumbnail = try ImageProcessors.Resize(size: PixelSize(width: 400, height: 400)).process(photo)
    let ultraHDR = try JPEGEncoder(quality: 85).encode(thumbnail)  // base + gain map
    if let map = thumbnail.gainMap {
        let linear = map.hdrRendition(of: thumbnail, headroom: 4)  // RGB floats, 1.0 = SDR white
        print(linear.max() ?? 0)
    }
    // end snippet
    return ultraHDR
}
