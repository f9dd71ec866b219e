/// The few string operations of Foundation's `NSString` (and its percent decoding) that the sender and its libraries need, written for Swift's
/// own `String` so that they link FoundationEssentials only (docs/performance.md, "`cast` start-up").

extension StringProtocol {
    /// The text without the white space at either end (spaces, tabs, and any other Unicode white space).
    public func trimmed() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = lastIndex(where: { !$0.isWhitespace })!
        return String(self[first...last])
    }

    /// Whether the two read the same but for case ("Living Room", "living room"): both lowercased by Unicode's rules,
    /// then compared as canonically equivalent Swift strings.
    public func matchesIgnoringCase(_ other: some StringProtocol) -> Bool {
        lowercased() == other.lowercased()
    }

    /// The last component of a path ("/a/b/movie.mp4" → "movie.mp4"; trailing slashes ignored; "/" → "/").
    public var lastPathComponent: String {
        guard let last = split(separator: "/").last else { return isEmpty ? "" : "/" }
        return String(last)
    }
}

/// `text` with each `%XX` replaced by its byte (and, with `plusIsSpace`, each `+` by a space, as form-encoded query
/// strings write one), read as UTF-8; nil when an escape is malformed or the bytes are not UTF-8, as Foundation's
/// `removingPercentEncoding` answers.
public func percentDecoded(_ text: Substring, plusIsSpace: Bool = false) -> String? {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        switch byte {
        case UInt8(ascii: "%"):
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        case UInt8(ascii: "+") where plusIsSpace: bytes.append(0x20)
        default: bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}

/// How people order names (`cast list`): case aside, and runs of digits by their value, so "Room 2" comes before
/// "Room 10" and "room 3" after "Room 2". Negative when `lhs` comes first, positive when `rhs` does, 0 when they
/// differ at most in case or in leading zeros ("Room 02", "room 2"): the caller breaks such ties as it needs.
public func compareNaturally(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Int {
    let a = Array(lhs.lowercased().unicodeScalars)
    let b = Array(rhs.lowercased().unicodeScalars)
    func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
    var i = 0
    var j = 0
    while i < a.count && j < b.count {
        guard isDigit(a[i]) && isDigit(b[j]) else {
            if a[i] != b[j] { return a[i] < b[j] ? -1 : 1 }
            i += 1
            j += 1
            continue
        }
        // Two numbers: the one with fewer significant digits is smaller; of as many, the first differing digit.
        let startA = i
        let startB = j
        while i < a.count && isDigit(a[i]) { i += 1 }
        while j < b.count && isDigit(b[j]) { j += 1 }
        let digitsA = a[startA..<i].drop { $0 == "0" }
        let digitsB = b[startB..<j].drop { $0 == "0" }
        if digitsA.count != digitsB.count { return digitsA.count < digitsB.count ? -1 : 1 }
        if let (x, y) = zip(digitsA, digitsB).first(where: { $0 != $1 }) { return x < y ? -1 : 1 }
    }
    if i < a.count { return 1 }
    if j < b.count { return -1 }
    return 0
}

/// Whether `lhs` comes before `rhs` as people order names (`compareNaturally`), ties broken by the exact text so
/// that a sort is the same at every run.
public func precedesNaturally(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
    let order = compareNaturally(lhs, rhs)
    return order == 0 ? String(lhs) < String(rhs) : order < 0
}

/// The value of one hexadecimal digit (either case); nil for anything else. Also the pairing fields' hex decoder's (CastProtocol).
package func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}
