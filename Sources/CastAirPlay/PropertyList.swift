import Foundation

/// Property lists: the bodies of `/play`, `/playback-info` and `/server-info`. Written with Foundation's
/// `PropertyListSerialization`; read with it for XML, and with `BinaryPropertyList` for binary lists.
enum PropertyList {
    /// The largest property list read (a `/play` body is a few hundred bytes; the HTTP body limit is higher).
    static let maximumSize = 64 * 1024

    /// Whether `bytes` look like a property list (binary `bplist`, or XML), not text parameters.
    static func isPropertyList(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: Array("bplist".utf8)) { return true }
        let text = bytes.drop {
            $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF
        }
        return text.starts(with: Array("<?xml".utf8)) || text.starts(with: Array("<plist".utf8))
            || text.starts(with: Array("<!DOCTYPE".utf8))
    }

    /// The top-level dictionary of a binary or XML property list; nil when it is not one.
    /// Binary lists are read by `BinaryPropertyList`, never by Foundation, which crashes on some malformed ones.
    static func dictionary(from bytes: [UInt8]) -> [String: Any]? {
        guard bytes.count <= maximumSize else { return nil }
        if bytes.starts(with: Array("bplist".utf8)) { return BinaryPropertyList.object(from: bytes) as? [String: Any] }
        guard let value = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        else { return nil }
        return value as? [String: Any]
    }

    /// `dictionary` as a binary property list. Its values are strings, numbers, booleans, arrays and
    /// dictionaries of those, which always serialise.
    static func binary(_ dictionary: [String: Any]) -> [UInt8] {
        do {
            return Array(try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0))
        } catch {
            preconditionFailure("a property list of plain values did not serialise: \(error)")
        }
    }

    /// A number from a property list (integer or real; Foundation bridges both, and booleans, to `NSNumber`, so a
    /// boolean reads as 0 or 1) or from text parameters (a decimal string); nil for anything else.
    static func number(_ value: Any?) -> Double? {
        if let number = value as? NSNumber { return number.doubleValue }
        if let text = value as? String { return Double(text) }
        return nil
    }
}
