import Foundation

/// A reader of binary property lists (`bplist00`) for what AirPlay clients send: bounded, iterative in size,
/// depth-limited, cycle-checked, bounded in total work, and never handing untrusted bytes to Foundation's parser,
/// which crashes on some malformed inputs (a set that bridges to `NSSet`, found by `AirPlayHTTPFuzz`).
///
/// Objects are shared by reference, so a small list can name a huge tree without a cycle: 15 arrays, each holding
/// 3800 references to the next, are 57 KB and 3800^15 nodes. Every object is therefore counted each time it is
/// reached (``maximumObjects``), and so is every byte of string and data made (``maximumBytes``).
///
/// Values: strings (ASCII, UTF-16), integers and reals (as `NSNumber`, as Foundation gives them), booleans
/// (`NSNumber`), data (`Data`), dates (`Date`), arrays and dictionaries with string keys. Sets, UIDs and anything
/// else make the whole list unreadable.
enum BinaryPropertyList {
    /// How deep arrays and dictionaries may nest.
    static let maximumDepth = 16
    /// The most objects read, each counted every time a reference reaches it. A `/play` body has a dozen; a 64 KiB
    /// list without shared containers has at most one per byte.
    static let maximumObjects = 64 * 1024
    /// The most bytes of strings and data made, each counted every time a reference reaches it.
    static let maximumBytes = 1024 * 1024

    /// The top-level object, or nil when `bytes` are not a well-formed binary property list of the kinds above.
    static func object(from bytes: [UInt8]) -> Any? {
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            let count = integer(bytes, at: trailer + 8, size: 8), let top = integer(bytes, at: trailer + 16, size: 8),
            let table = integer(bytes, at: trailer + 24, size: 8),
            count > 0, count <= bytes.count, top < count, table >= 8, table <= trailer,
            count * offsetSize <= trailer - table
        else { return nil }
        var reader = Reader(
            bytes: bytes, end: table, offsets: (0..<count).map { table + $0 * offsetSize }, offsetSize: offsetSize,
            referenceSize: referenceSize)
        return reader.object(top, depth: 0)
    }

    /// A big-endian unsigned integer of `size` bytes at `index`; nil when out of bounds or above Int.max.
    static func integer(_ bytes: [UInt8], at index: Int, size: Int) -> Int? {
        guard index >= 0, size >= 1, size <= 8, index <= bytes.count - size else { return nil }
        var value: UInt64 = 0
        for byte in bytes[index..<(index + size)] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        /// Where objects end (the offset table begins).
        let end: Int
        /// Where each object's offset is written.
        let offsets: [Int]
        let offsetSize: Int
        let referenceSize: Int
        /// The objects being read, outermost first: one met again is a cycle.
        var path: Set<Int> = []
        /// How many more objects (the top one is made already), and bytes of strings and data, may be made before the
        /// list is refused.
        var objectsLeft = BinaryPropertyList.maximumObjects - 1
        var bytesLeft = BinaryPropertyList.maximumBytes

        mutating func object(_ reference: Int, depth: Int) -> Any? {
            guard reference >= 0, reference < offsets.count, depth <= BinaryPropertyList.maximumDepth,
                !path.contains(reference),
                let start = BinaryPropertyList.integer(bytes, at: offsets[reference], size: offsetSize),
                start >= 8, start < end
            else { return nil }
            let marker = bytes[start]
            let info = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return NSNumber(value: false)
                case 0x09: return NSNumber(value: true)
                default: return nil
                }
            case 0x1:
                // 1, 2 and 4 bytes are unsigned; 8 bytes are signed.
                guard info <= 3, start + 1 + (1 << info) <= end else { return nil }
                var raw: UInt64 = 0
                for byte in bytes[(start + 1)..<(start + 1 + (1 << info))] { raw = raw << 8 | UInt64(byte) }
                return info == 3 ? NSNumber(value: Int64(bitPattern: raw)) : NSNumber(value: raw)
            case 0x2, 0x3:
                let size = marker == 0x33 ? 8 : 1 << info
                guard size == 4 || size == 8, marker >> 4 == 0x2 || marker == 0x33, start + 1 + size <= end else {
                    return nil
                }
                var raw: UInt64 = 0
                for byte in bytes[(start + 1)..<(start + 1 + size)] { raw = raw << 8 | UInt64(byte) }
                let value = size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)
                return marker == 0x33 ? Date(timeIntervalSinceReferenceDate: value) : NSNumber(value: value)
            case 0x4, 0x5, 0x6:
                let unit = marker >> 4 == 0x6 ? 2 : 1
                guard let (length, first) = length(info, after: start), length <= (end - first) / unit else {
                    return nil
                }
                let byteCount = length * unit
                guard byteCount <= bytesLeft else { return nil }
                bytesLeft -= byteCount
                let slice = Array(bytes[first..<(first + byteCount)])
                switch marker >> 4 {
                case 0x4: return Data(slice)
                case 0x5: return slice.allSatisfy({ $0 < 0x80 }) ? String(decoding: slice, as: UTF8.self) : nil
                default:
                    let units = stride(from: 0, to: slice.count, by: 2).map {
                        UInt16(slice[$0]) << 8 | UInt16(slice[$0 + 1])
                    }
                    return String(utf16CodeUnits: units, count: units.count)
                }
            case 0xA, 0xD:
                guard let (count, first) = length(info, after: start), count <= end - first else { return nil }
                let references = marker >> 4 == 0xD ? count * 2 : count
                // Each reference becomes an object: counted here, before any is read, so that a bomb is refused
                // after a few containers instead of after a walk through thousands of leaves.
                guard references <= (end - first) / referenceSize, references <= objectsLeft else { return nil }
                objectsLeft -= references
                let refs = (0..<references).compactMap {
                    BinaryPropertyList.integer(bytes, at: first + $0 * referenceSize, size: referenceSize)
                }
                guard refs.count == references else { return nil }
                path.insert(reference)
                defer { path.remove(reference) }
                if marker >> 4 == 0xA {
                    var array: [Any] = []
                    for ref in refs {
                        guard let value = object(ref, depth: depth + 1) else { return nil }
                        array.append(value)
                    }
                    return array
                }
                var dictionary: [String: Any] = [:]
                for index in 0..<count {
                    guard let key = object(refs[index], depth: depth + 1) as? String,
                        let value = object(refs[count + index], depth: depth + 1)
                    else { return nil }
                    dictionary[key] = value
                }
                return dictionary
            default:
                return nil
            }
        }

        /// The length in a marker's low nibble, or in the integer object after it when the nibble is 0xF; and where
        /// the contents begin.
        func length(_ info: Int, after start: Int) -> (Int, Int)? {
            guard info == 0x0F else { return (info, start + 1) }
            guard start + 1 < end else { return nil }
            let marker = bytes[start + 1]
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { return nil }
            let size = 1 << Int(marker & 0x0F)
            guard start + 2 + size <= end, let length = BinaryPropertyList.integer(bytes, at: start + 2, size: size)
            else { return nil }
            return (length, start + 2 + size)
        }
    }
}
