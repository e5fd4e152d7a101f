/// Byte comparisons whose time does not depend on where the bytes differ: for signatures and
/// secrets a client sends.
enum ConstantTime {
    /// Whether `given` equals `expected`; every byte of `expected` is compared whatever `given` is.
    static func equal(_ expected: [UInt8], _ given: [UInt8]) -> Bool {
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
