// `ServiceRecord(txt:)`: what a sender learns from a receiver's mDNS TXT record.
//
// Input: DNS TXT rdata, i.e. strings each preceded by its length byte; each string is `key=value`
// (no '=': the value is empty), split and decoded as CastDiscovery's TXTRecord does (invalid UTF-8 replaced,
// a later duplicate key wins).
//
// Invariants: a parsed record keeps the TXT's `id`, `fn` and `auth`; `ServiceRecord(txt: record.txt)`
// gives the same record, and `.txt` of that is the same dictionary (the canonical form); the canonical `ft`
// is `0x` + upper-case hex.

private func dictionary(_ bytes: [UInt8]) -> [String: String] {
    var reader = ByteReader(bytes)
    var txt: [String: String] = [:]
    while !reader.isAtEnd {
        let item = reader.take(Int(reader.byte()))
        guard !item.isEmpty else { continue }
        if let equals = item.firstIndex(of: UInt8(ascii: "=")) {
            txt[String(decoding: item[..<equals], as: UTF8.self)] = String(
                decoding: item[(equals + 1)...], as: UTF8.self)
        } else {
            txt[String(decoding: item, as: UTF8.self)] = ""
        }
    }
    return txt
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let txt = dictionary(fuzzInput(data, size))
    guard let record = ServiceRecord(txt: txt) else { return 0 }
    invariant(record.id == txt["id"] && !record.id.isEmpty, "id changed: \(txt)")
    invariant(record.friendlyName == txt["fn"] ?? "", "friendly name changed: \(txt)")
    invariant(record.auth.rawValue == txt["auth"], "auth changed: \(txt)")
    let canonical = record.txt
    guard let again = ServiceRecord(txt: canonical) else {
        invariant(false, "the record's own TXT does not parse: \(canonical) (from \(txt))")
        return 0
    }
    invariant(again == record, "round trip changed \(record) to \(again)")
    invariant(again.txt == canonical, "TXT not canonical: \(canonical) vs \(again.txt)")
    let ft = canonical["ft"] ?? ""
    invariant(ft.hasPrefix("0x") && ft.dropFirst(2).allSatisfy { "0123456789ABCDEF".contains($0) }, "ft \(ft)")
    return 0
}
