// UIImageView and NSImageView as display targets. Written for Apple platforms and never compiled
// here (Linux has neither framework); the README says so.
#if canImport(ObjectiveC) && (canImport(UIKit) || canImport(AppKit))
    import ObjectiveC
    #if canImport(UIKit)
        import UIKit

        /// The platform's image view.
        public typealias PlatformImageView = UIImageView

        extension Image {
            /// The first frame as a `UIImage`, at the image's scale.
            var platformImage: UIImage? { cgImage.map { UIImage(cgImage: $0, scale: scale, orientation: .up) } }
        }
    #else
        import AppKit

        /// The platform's image view.
        public typealias PlatformImageView = NSImageView

        extension Image {
            /// The first frame as an `NSImage`, sized in points by the image's scale.
            var platformImage: NSImage? {
                cgImage.map { NSImage(cgImage: $0, size: NSSize(width: Double(width) / scale, height: Double(height) / scale)) }
            }
        }
    #endif

    nonisolated(unsafe) private var imageBindingKey: UInt8 = 0

    extension PlatformImageView: ImageDisplaying {
        /// The view's binding, kept as an associated object so it goes away with the view.
        public var imageBinding: ImageBinding {
            if let binding = objc_getAssociatedObject(self, &imageBindingKey) as? ImageBinding { return binding }
            let binding = ImageBinding()
            objc_setAssociatedObject(self, &imageBindingKey, binding, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
            return binding
        }

        public func display(_ image: Image?) {
            self.image = image?.platformImage
        }
    }
#endif
