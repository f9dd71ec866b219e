// SpeakerPacket.decode: every UDP datagram a speaker (or anyone) sends to our timing and control ports.
//
// Input: the datagram.
//
// Invariants: decode returns a packet or throws `malformedPacket`, never traps; a decoded packet re-encodes to a
// datagram of the same length that decodes to the same packet (the encoding is canonical); a timing request gets
// a 32-byte reply that echoes its time as the origin; sync and timing packets are exactly 20 and 32 bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = fuzzInput(data, size)
    let packet: SpeakerPacket
    do {
        packet = try SpeakerPacket.decode(bytes)
    } catch {
        invariant(error.code == .malformedPacket, "thrown \(error.code)")
        return 0
    }
    let encoded = packet.encoded
    invariant(encoded.count == bytes.count, "\(bytes.count) bytes re-encode to \(encoded.count)")
    let again = try? SpeakerPacket.decode(encoded)
    invariant(again == packet, "not canonical: \(packet) became \(String(describing: again))")
    switch packet {
    case .sync: invariant(bytes.count == 20, "sync of \(bytes.count)")
    case .timingRequest(_, let sent):
        invariant(bytes.count == 32, "timing request of \(bytes.count)")
        let reply = SpeakerPacket.reply(to: packet, received: NTPTime(rawValue: 1), sent: NTPTime(rawValue: 2))
        guard case .timingReply(_, let origin, _, _)? = reply else {
            invariant(false, "no reply")
            return 0
        }
        invariant(origin == sent, "the reply does not echo the request's time")
        invariant(reply?.encoded.count == 32, "reply length")
    case .timingReply: invariant(bytes.count == 32, "timing reply of \(bytes.count)")
    case .resendRequest: invariant(bytes.count == 8, "resend request of \(bytes.count)")
    case .audio(_, _, _, _, let payload):
        invariant(payload.count <= SpeakerPacket.audioPayloadBytes, "payload \(payload.count)")
    }
    return 0
}
