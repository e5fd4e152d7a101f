#if Video
    import Foundation

    extension VideoDecoder {
        /// Where a sequence's frames go: each is scaled to ``scaled``, then cropped (filling) or
        /// centred on black (extending) into a cell of ``cell``.
        struct SequenceGeometry: Equatable {
            var scaled: PixelSize
            var cell: PixelSize
            /// Where the scaled frame's top-left corner lies in the cell (negative: cropped off).
            var offset: (x: Int, y: Int)

            static func == (left: Self, right: Self) -> Bool {
                left.scaled == right.scaled && left.cell == right.cell && left.offset == right.offset
            }

            init(shown: PixelSize, sequence: VideoFrameSequence) {
                let box = sequence.frameSize
                let width = Double(shown.width), height = Double(shown.height)
                // A 0 side follows the other by the picture's aspect; both 0: the picture's own size.
                let scaleX = box.width > 0 ? Double(box.width) / width : nil, scaleY = box.height > 0 ? Double(box.height) / height : nil
                let scale: Double =
                    switch (scaleX, scaleY) {
                    case (let x?, let y?): sequence.fills ? max(x, y) : min(x, y)
                    case (let x?, nil): x
                    case (nil, let y?): y
                    case (nil, nil): 1
                    }
                scaled = PixelSize(width: max(1, Int((width * scale).rounded())), height: max(1, Int((height * scale).rounded())))
                let target = PixelSize(width: box.width > 0 ? box.width : scaled.width, height: box.height > 0 ? box.height : scaled.height)
                if sequence.fills {
                    cell = target
                    let focusX = min(max(sequence.focusX, 0), 1), focusY = min(max(sequence.focusY, 0), 1)
                    let x = Int((Double(scaled.width) * focusX - Double(target.width) / 2).rounded())
                    let y = Int((Double(scaled.height) * focusY - Double(target.height) / 2).rounded())
                    offset = (-min(max(x, 0), scaled.width - target.width), -min(max(y, 0), scaled.height - target.height))
                } else if sequence.extends {
                    cell = target
                    offset = ((target.width - scaled.width) / 2, (target.height - scaled.height) / 2)
                } else {
                    cell = scaled
                    offset = (0, 0)
                }
            }
        }

        /// A sprite or an animation of `sequence`'s frames of `file`.
        func decodeSequence(_ file: VideoFile, _ sequence: VideoFrameSequence, options: DecodingOptions) throws(ImagoError) -> Image {
            let info = file.info
            let count = sequence.count
            guard count > 0, sequence.step != 0, sequence.step.isFinite else {
                throw ImagoError.invalid(format, "a frame sequence needs frames and a step other than 0")
            }
            try options.checkFrames(count, width: 1, height: 1)
            let step: Double
            if sequence.step < 0 {
                guard let duration = info.duration, duration > 0 else { throw ImagoError.invalid(format, "no duration to spread the frames over") }
                step = duration / Double(count)
            } else {
                step = sequence.step
            }
            let start = options.videoFrame.second
            let times = (0..<count).map { start + Double($0) * step }
            // Frames at or past the end: none with `trims`, else the last frame (an animation) or an empty tile (a sprite).
            let inside = info.duration.map { end in times.filter { $0 < end }.count } ?? count
            let used = max(1, inside)

            let orientation = options.appliesOrientation ? info.orientation : .up
            let geometry = SequenceGeometry(shown: Self.shownSize(info, options: options), sequence: sequence)
            let (cell, scaled) = (geometry.cell, geometry.scaled)
            try options.check(width: cell.width, height: cell.height)
            try options.check(width: scaled.width, height: scaled.height)
            let stored = orientation.swapsDimensions ? scaled.turned : scaled
            var frameOptions = options
            if case .sprite = sequence.layout, sequence.autoKeyframes, let interval = info.keyframeInterval, step > interval {
                frameOptions.videoFrame.keyframesOnly = true
            }

            switch sequence.layout {
            case .sprite(let columns, let rows):
                let tiles = sequence.trims ? used : count
                let (usedColumns, usedRows) = sequence.trims ? (min(columns, tiles), (tiles + columns - 1) / columns) : (columns, rows)
                let (width, height) = (usedColumns.multipliedReportingOverflow(by: cell.width), usedRows.multipliedReportingOverflow(by: cell.height))
                guard !width.overflow, !height.overflow else { throw ImagoError.invalid(format, "the sprite is too large") }
                try options.check(width: width.partialValue, height: height.partialValue)
                try options.checkMemory(2, width: width.partialValue, height: height.partialValue)
                var canvas = [UInt8](repeating: 0, count: width.partialValue * height.partialValue * 4)
                for index in 0..<min(tiles, used) {
                    let tile = try cellPixels(
                        file, second: times[index], stored: stored, orientation: orientation, geometry: geometry, options: frameOptions)
                    copyRGBA(
                        tile, width: cell.width, height: cell.height, into: &canvas, canvasWidth: width.partialValue,
                        at: ((index % columns) * cell.width, (index / columns) * cell.height))
                }
                return image(
                    width: width.partialValue, height: height.partialValue, frames: [Image.Frame(pixels: canvas)], info: info, orientation: orientation)
            case .animation(_, let delay):
                let frames = sequence.trims ? used : count
                try options.checkFrames(frames, width: cell.width, height: cell.height)
                try options.checkMemory(frames + 1, width: cell.width, height: cell.height)
                var made: [Image.Frame] = []
                for index in 0..<frames {
                    guard index < used else {
                        made.append(made[made.count - 1])
                        continue
                    }
                    let pixels = try cellPixels(file, second: times[index], stored: stored, orientation: orientation, geometry: geometry, options: options)
                    made.append(Image.Frame(pixels: pixels, duration: delay))
                }
                return image(width: cell.width, height: cell.height, frames: made, info: info, orientation: orientation)
            }
        }

        /// One frame at `second`, scaled, turned upright and placed in its cell.
        private func cellPixels(
            _ file: VideoFile, second: Double, stored: PixelSize, orientation: ImageOrientation, geometry: SequenceGeometry, options: DecodingOptions
        ) throws(ImagoError) -> [UInt8] {
            let selection = VideoFrameSelection(second: second, keyframesOnly: options.videoFrame.keyframesOnly, maxPackets: options.videoFrame.maxPackets)
            let frame = try file.frame(selection, size: stored, options: options)
            let upright = orientation.apply(to: frame.pixels, width: stored.width, height: stored.height)
            guard geometry.cell != geometry.scaled || geometry.offset != (0, 0) else { return upright.pixels }
            // Black behind an extended frame, as imgproxy extends tiles; a filled cell is covered whole.
            var cell = [UInt8](repeating: 0, count: geometry.cell.width * geometry.cell.height * 4)
            for index in stride(from: 3, to: cell.count, by: 4) { cell[index] = 255 }
            copyRGBA(upright.pixels, width: upright.width, height: upright.height, into: &cell, canvasWidth: geometry.cell.width, at: geometry.offset)
            return cell
        }

        private func image(width: Int, height: Int, frames: [Image.Frame], info: VideoInfo, orientation: ImageOrientation) -> Image {
            // The canvas is upright: stored sides given so that the upright original is the canvas.
            let stored = orientation.swapsDimensions ? (height, width) : (width, height)
            var metadata = ImageMetadata(
                format: format, originalWidth: stored.0, originalHeight: stored.1, orientationApplied: orientation, hasAlpha: true,
                bitsPerSample: info.bitsPerSample)
            metadata.video = info
            return Image(width: width, height: height, frames: frames, metadata: metadata)
        }
    }
#endif
