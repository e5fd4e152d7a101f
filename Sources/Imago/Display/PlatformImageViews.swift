// UIImageView and NSImageView as display targets. Written for Apple platforms and never compiled
// here (Linux has neither framework); the README says so.
#if canImport(UIKit) && canImport(ObjectiveC)
import ObjectiveC
import UIKit

nonisolated(unsafe) private var imageBindingKey: UInt8 = 0

extension UIImageView: ImageDisplaying {
    /// The view's binding, kept as an associated object so it goes away with the view.
    public var imageBinding: ImageBinding {
        if let binding = objc_getAssociatedObject(self, &imageBindingKey) as? ImageBinding { return binding }
        let binding = ImageBinding()
        objc_setAssociatedObject(self, &imageBindingKey, binding, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
        return binding
    }

    public func display(_ image: Image?) {
        self.image = image.flatMap { image in image.cgImage.map { UIImage(cgImage: $0, scale: image.scale, orientation: .up) } }
    }
}
#elseif canImport(AppKit) && canImport(ObjectiveC)
import AppKit
import ObjectiveC

nonisolated(unsafe) private var imageBindingKey: UInt8 = 0

extension NSImageView: ImageDisplaying {
    /// The view's binding, kept as an associated object so it goes away with the view.
    public var imageBinding: ImageBinding {
        if let binding = objc_getAssociatedObject(self, &imageBindingKey) as? ImageBinding { return binding }
        let binding = ImageBinding()
        objc_setAssociatedObject(self, &imageBindingKey, binding, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
        return binding
    }

    public func display(_ image: Image?) {
        self.image = image.flatMap { image in
            image.cgImage.map { NSImage(cgImage: $0, size: NSSize(width: Double(image.width) / image.scale, height: Double(image.height) / image.scale)) }
        }
    }
}
#endif
