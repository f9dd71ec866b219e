// How a user names a receiver: `ReceiverQuery(String)` and `ReceiverQuery.match`.
//
// Input: byte 0 = which of eight fixed receivers are in sight (a bit each), byte 1 bit 0 = no query (nil),
// the rest = the text typed.
//
// Invariants: an address has a port > 0 and a non-empty host, and its canonical form
// (`ReceiverDescription.address`) parses to the same address; `match` returns a receiver in sight that the
// query names (exact name, exact id, or the only prefix), prefers an exact name, or throws noSuchReceiver.

private let fixed: [ReceiverDescription] = [
    ReceiverDescription(name: "Living Room", id: "a1b2c3d4e5f60718", host: "192.0.2.10", port: 7000),
    ReceiverDescription(name: "living room TV", id: "a1ffffffffffffff", host: "fe80::1%eth0", port: 7000),
    ReceiverDescription(name: "Kitchen", id: "0123456789abcdef", host: "192.0.2.11", port: 7001),
    ReceiverDescription(name: "Küche", id: "0123ffffffffffff", host: "192.0.2.12", port: 7002),
    ReceiverDescription(name: "İstanbul", id: "beefbeefbeefbeef", host: "2001:db8::2", port: 1),
    ReceiverDescription(name: "192.0.2.10:7000", id: "", host: "192.0.2.13", port: 65535),
    ReceiverDescription(name: "", id: "", host: "localhost", port: 7000),
    ReceiverDescription(name: "Ⅻ attic 📺", id: "ABCDEF0123456789", host: "attic.local", port: 7000),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var reader = ByteReader(fuzzInput(data, size))
    let mask = reader.byte()
    let noQuery = reader.byte() & 1 == 1
    let text = String(decoding: reader.rest(), as: UTF8.self)

    switch ReceiverQuery(text) {
    case .address(let host, let port):
        invariant(port > 0, "port 0 from \(text.debugDescription)")
        invariant(!host.isEmpty, "empty host from \(text.debugDescription)")
        let canonical = ReceiverDescription(name: "", id: "", host: host, port: port).address
        invariant(
            ReceiverQuery(canonical) == .address(host: host, port: port),
            "\(text.debugDescription) → \(host.debugDescription):\(port) but \(canonical.debugDescription) → \(ReceiverQuery(canonical))"
        )
    case .name(let name):
        invariant(name == text, "name \(name.debugDescription) from \(text.debugDescription)")
    }

    let inSight = fixed.indices.filter { mask & (1 << $0) != 0 }.map { fixed[$0] }
    let query: String? = noQuery ? nil : text
    do {
        let found = try ReceiverQuery.match(query, in: inSight)
        invariant(inSight.contains(found), "match returned a receiver not in sight")
        guard let query else {
            invariant(inSight.count == 1, "nil query matched among \(inSight.count)")
            return 0
        }
        let folded = query.lowercased()
        if let exact = inSight.first(where: { $0.name.lowercased() == folded }) {
            invariant(
                found == exact, "\(query.debugDescription) matched \(found.name.debugDescription), not the exact name")
        } else {
            let named =
                (!found.id.isEmpty && found.id.lowercased() == folded) || found.name.lowercased().hasPrefix(folded)
                || (!found.id.isEmpty && found.id.lowercased().hasPrefix(folded))
            invariant(named, "\(query.debugDescription) matched \(found.name.debugDescription), which it does not name")
        }
    } catch {
        invariant(error.kind == .noSuchReceiver, "match threw \(error)")
        if let query {
            invariant(
                !inSight.contains { $0.name.lowercased() == query.lowercased() },
                "exact name not matched: \(query.debugDescription)")
        } else {
            invariant(inSight.count != 1, "the only receiver in sight was not matched")
        }
    }
    return 0
}
