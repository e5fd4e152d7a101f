import Foundation

/// The transforms made so far, by profile, pixel layout and limits, for the whole process: making
/// one costs 2–40 ms, using it microseconds a row. Refusals are remembered too, so a broken
/// profile that every image of a site carries is read once. At most ``capacity`` are kept; the
/// oldest made goes first.
final class ColorTransforms: Sendable {
    static let shared = ColorTransforms()

    /// Profiles kept at once: a site has a handful; a hostile stream of distinct profiles only
    /// makes the oldest go.
    let capacity = 64

    private struct Key: Hashable {
        var profile: ColorProfile
        var layout: ColorPixelLayout
        var maxProfileSize: Int
        var maxMemory: Int
    }

    private struct Entries {
        var byKey: [Key: Result<ColorTransform, ColorTransform.Refusal>] = [:]
        var order: [Key] = []
    }

    private let entries = Locked(Entries())

    /// The transform to sRGB for `profile`'s pixels as `layout`, or why there is none. An RGBA16
    /// transform of a profile whose RGBA8 one is the identity is that identity too.
    func transform(for profile: ColorProfile, layout: ColorPixelLayout, options: DecodingOptions) -> Result<ColorTransform, ColorTransform.Refusal> {
        if layout == .rgba16 {
            let eight = transform(for: profile, layout: .rgba8, options: options)
            guard case .success(let transform) = eight, !transform.isIdentity else { return eight }
        }
        let key = Key(profile: profile, layout: layout, maxProfileSize: options.maxColorProfileSize, maxMemory: options.maxColorTransformMemory)
        if let made = entries.withLock({ $0.byKey[key] }) { return made }
        // Made outside the lock: two threads meeting a new profile at once may both make it.
        let made = ColorTransform.make(profile: profile, layout: layout, maxProfileSize: key.maxProfileSize, maxMemory: key.maxMemory)
        return entries.withLock { entries in
            if let earlier = entries.byKey[key] { return earlier }
            if entries.order.count >= capacity { entries.byKey[entries.order.removeFirst()] = nil }
            entries.byKey[key] = made
            entries.order.append(key)
            return made
        }
    }

    /// Transforms and refusals kept now.
    var count: Int {
        entries.withLock { $0.byKey.count }
    }

    /// Forgets every transform and refusal.
    func removeAll() {
        entries.withLock { $0 = Entries() }
    }
}

/// The process's colour caches, for the fuzz harnesses, which empty them after each input: a
/// `Data` or `Result` held in a global is stored with enum tag bits in its pointer, which
/// LeakSanitizer cannot follow, so whatever a global cache holds at exit reads as leaked.
package enum ColorCaches {
    /// Empties the transform cache and the profiles built from PNG chunks and CICP.
    package static func removeAll() {
        ColorTransforms.shared.removeAll()
        ColorProfile.forgetBuiltProfiles()
    }

    /// Transforms (at most 64) and built profiles (at most 64) kept now, for a service's memory report.
    package static var count: (transforms: Int, profiles: Int) {
        (ColorTransforms.shared.count, ColorProfile.builtProfileCount)
    }
}
