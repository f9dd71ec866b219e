/// A `mediaRead` payload written and read without Foundation's JSON coders, in the one form `JSONPayload.encode` gives
/// it (sorted keys, no spaces): `{"length":65536,"offset":0}`, with `,"resource":1` last when it has one.
///
/// A read crosses two JSON boundaries for every megabyte of media (the worker to castd, castd to the sender), and each
/// JSONDecoder or JSONEncoder call cost tens of microseconds, more in a process that has not decoded that type yet
/// (the profile of the media connection's burst: 6 % of castd's CPU). Anything not in exactly this form, spaces or
/// keys in another order included, is left to the JSONDecoder (`canonical` returns nil), so what is accepted and what
/// is refused stays what the JSON rules say.
extension MediaRead {
    /// The payload, the same bytes as `JSONPayload.encode(self)`.
    var canonicalPayload: [UInt8] {
        var bytes = Array(#"{"length":"#.utf8)
        bytes += String(length).utf8
        bytes += #","offset":"#.utf8
        bytes += String(offset).utf8
        if let resource {
            bytes += #","resource":"#.utf8
            bytes += String(resource).utf8
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The read in `payload` when it is in exactly the canonical form, nil otherwise (not an error: the JSONDecoder
    /// judges it then). Numbers are 1 to 18 digits without a sign or leading zeros, so none overflows.
    static func canonical(_ payload: [UInt8]) -> MediaRead? {
        var index = 0
        func expect(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard payload.count - index >= count else { return false }
            for offset in 0..<count where payload[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }
        func number() -> Int64? {
            let start = index
            var value: Int64 = 0
            while index < payload.count, index - start < 18, (48...57).contains(payload[index]) {
                value = value * 10 + Int64(payload[index] - 48)
                index += 1
            }
            let digits = index - start
            guard digits > 0, index == payload.count || !(48...57).contains(payload[index]) else { return nil }
            guard digits == 1 || payload[start] != 48 else { return nil }
            return value
        }
        guard expect(#"{"length":"#), let length = number(), expect(#","offset":"#), let offset = number() else {
            return nil
        }
        var resource: Int?
        if expect(#","resource":"#) {
            guard let value = number() else { return nil }
            resource = Int(value)
        }
        guard expect("}"), index == payload.count else { return nil }
        var read = MediaRead(offset: offset, length: Int(length))
        // As decoded: a resource of 0 stays written as 0 (the JSONDecoder keeps what it was given).
        read.resource = resource
        return read
    }
}
