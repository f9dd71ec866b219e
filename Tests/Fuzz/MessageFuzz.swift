// Message and PairingMessage decoding: byte 0 = the message type, the rest = the payload.
//
// Invariants: decoding either succeeds or throws unknownMessageType (exactly for unknown types) or
// malformedMessage; a decoded message re-encodes (`frame()` must not trap) to a frame of the same type
// that decodes to an equal message, and that encoding is canonical (encoding again gives the same bytes);
// text fields of accepted messages are within `maximumTextLength`; thumbnail requests and parts are within their
// bounds (times, width, part size and count); time stamps are ≥ 0 (a reply not before its request arrived);
// a play request has exactly one of media
// and url, and a url is http(s), printable ASCII, with a host and no credentials in it.
import Foundation

private let pairingTypes = Set(PairingMessageType.allCases.map(\.rawValue))

private func checkTexts(_ message: Message) {
    func bounded(_ text: String?, _ field: String) {
        invariant((text?.utf8.count ?? 0) <= maximumTextLength, "\(field) of \(text?.utf8.count ?? 0) bytes accepted")
    }
    switch message {
    case .hello(let body):
        bounded(body.name, "hello.name")
        bounded(body.software, "hello.software")
    case .welcome(let body):
        bounded(body.name, "welcome.name")
        bounded(body.id, "welcome.id")
    case .status(let body):
        bounded(body.name, "status.name")
        bounded(body.title, "status.title")
    case .error(let body): bounded(body.message, "error.message")
    case .play(let body):
        bounded(body.title, "play.title")
        invariant(
            (body.media == nil) != (body.url == nil),
            "play with media \(String(describing: body.media)) and url \(String(describing: body.url))")
        bounded(body.media?.nameHint, "play.media.nameHint")
        invariant((body.media?.size ?? 0) >= 0, "negative media size accepted")
        if let url = body.url {
            // The receiver opens it itself (FFmpeg): only http(s), printable ASCII, no credentials inside.
            let lower = url.lowercased()
            invariant(
                lower.hasPrefix("http://") || lower.hasPrefix("https://"), "play.url \(url.debugDescription) accepted")
            invariant(url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "play.url \(url.debugDescription) accepted")
            let authority = url.drop { $0 != ":" }.dropFirst(3).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            invariant(!authority.isEmpty && !authority.contains("@"), "play.url \(url.debugDescription) accepted")
        } else {
            invariant(body.username == nil && body.password == nil, "credentials without a url accepted")
        }
        invariant(body.password == nil || body.username != nil, "password without username accepted")
        invariant(body.startTime.map { $0.isFinite && $0 >= 0 } ?? true, "bad startTime accepted")
    case .playAccepted(let body): bounded(body.session, "playAccepted.session")
    case .mediaHello(let body): bounded(body.session, "mediaHello.session")
    case .mediaRead(let body):
        invariant(
            body.offset >= 0 && body.length > 0 && body.length <= MediaRead.maximumLength, "bad mediaRead accepted")
    case .mediaData(let body): invariant(body.offset >= 0, "negative mediaData offset accepted")
    case .thumbnailRequest(let body):
        invariant(
            (1...ThumbnailRequest.maximumTimes).contains(body.times.count),
            "\(body.times.count) thumbnail times accepted")
        invariant(body.times.allSatisfy { $0.isFinite && $0 >= 0 && $0 <= 1e7 }, "bad thumbnail time accepted")
        invariant(
            body.maxWidth.map { (16...ThumbnailRequest.maximumWidth).contains($0) } ?? true, "bad maxWidth accepted")
    case .thumbnail(let body):
        bounded(body.error, "thumbnail.error")
        invariant(
            body.data.count <= ThumbnailPart.maximumPartBytes, "thumbnail part of \(body.data.count) bytes accepted")
        invariant(
            body.part >= 0 && body.part < body.parts && body.parts <= ThumbnailPart.maximumParts, "bad part accepted")
        invariant((body.error == nil) != body.data.isEmpty, "thumbnail part with both or neither of data and error")
    case .timeRequest(let body): invariant(body.sent >= 0, "negative timeRequest.sent accepted")
    case .timeReply(let body):
        invariant(body.sent >= 0 && body.received >= 0 && body.replied >= body.received, "bad timeReply accepted")
    default: break
    }
}

private func checkPairing(_ message: PairingMessage) {
    switch message {
    case .start(let body):
        invariant(body.name.utf8.count <= maximumTextLength, "long pairingStart.name accepted")
        invariant(
            body.publicKey.count == PairingFieldLimits.publicKeyCount,
            "pairingStart key of \(body.publicKey.count) bytes")
    case .challenge(let body):
        invariant(
            (1...PairingFieldLimits.maximumSaltCount).contains(body.salt.count), "salt of \(body.salt.count) bytes")
        invariant((1...PairingFieldLimits.maximumPublicValueCount).contains(body.B.count), "B of \(body.B.count) bytes")
    case .proof(let body):
        invariant((1...PairingFieldLimits.maximumPublicValueCount).contains(body.A.count), "A of \(body.A.count) bytes")
        invariant((1...PairingFieldLimits.maximumProofCount).contains(body.M1.count), "M1 of \(body.M1.count) bytes")
    case .confirmation(let body):
        invariant((1...PairingFieldLimits.maximumProofCount).contains(body.M2.count), "M2 of \(body.M2.count) bytes")
        invariant(
            body.publicKey.count == PairingFieldLimits.publicKeyCount,
            "confirmation key of \(body.publicKey.count) bytes")
    case .failure(let body):
        invariant(body.message.utf8.count <= maximumTextLength, "long pairingFailure.message accepted")
        invariant(
            body.retryAfter.map { (0...PairingFieldLimits.maximumRetryAfter).contains($0) } ?? true, "bad retryAfter")
    }
}

private func describe(_ frame: Frame) -> String {
    "type \(frame.type), payload \(String(decoding: frame.payload, as: UTF8.self).debugDescription)"
}

private func fuzzMessage(_ frame: Frame) {
    let message: Message
    do {
        message = try Message(frame)
    } catch {
        switch error.code {
        case .unknownMessageType:
            let known = MessageType(rawValue: frame.type) != nil || pairingTypes.contains(frame.type)
            invariant(!known, "known type \(frame.type) reported as unknown")
        case .malformedMessage: break
        default: invariant(false, "Message(frame) threw \(error.code)")
        }
        return
    }
    checkTexts(message)
    invariant(message.type.rawValue == frame.type, "decoded as \(message.type), read as type \(frame.type)")
    if case .pairing(let pairing) = message {
        checkPairing(pairing)
        invariant((try? PairingMessage(frame)) == pairing, "Message(frame) and PairingMessage(frame) disagree")
    } else {
        invariant(!pairingTypes.contains(frame.type), "pairing type \(frame.type) decoded as \(message.type)")
    }
    let encoded = message.frame()
    invariant(encoded.type == frame.type, "re-encoded as type \(encoded.type), read as \(frame.type)")
    let again: Message
    do {
        again = try Message(encoded)
    } catch {
        invariant(false, "re-encoded message does not decode (\(error)): \(describe(encoded))")
        return
    }
    invariant(again == message, "round trip changed the message: \(describe(frame)) → \(describe(encoded))")
    invariant(again.frame() == encoded, "encoding is not canonical: \(describe(encoded))")
}

private func fuzzPairing(_ frame: Frame) {
    let message: PairingMessage
    do {
        message = try PairingMessage(frame)
    } catch {
        switch error.code {
        case .unknownMessageType:
            invariant(!pairingTypes.contains(frame.type), "pairing type \(frame.type) reported as unknown")
        case .malformedMessage: break
        default: invariant(false, "PairingMessage(frame) threw \(error.code)")
        }
        return
    }
    checkPairing(message)
    let encoded = message.frame()
    invariant(encoded.type == frame.type, "re-encoded as type \(encoded.type), read as \(frame.type)")
    guard let again = try? PairingMessage(encoded) else {
        invariant(false, "re-encoded pairing message does not decode: \(describe(encoded))")
        return
    }
    invariant(again == message, "round trip changed the pairing message: \(describe(frame)) → \(describe(encoded))")
    invariant(again.frame() == encoded, "pairing encoding is not canonical: \(describe(encoded))")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let type = input.first else { return 0 }
    let frame = Frame(type: type, payload: Array(input.dropFirst()))
    fuzzMessage(frame)
    if pairingTypes.contains(type) { fuzzPairing(frame) }
    return 0
}
