import FoundationEssentials

/// A decoded pairing message (types 30–39). Shaped like `Message` so the two can be merged.
public enum PairingMessage: Sendable, Equatable {
    /// See `PairingStart`.
    case start(PairingStart)
    /// See `PairingChallenge`.
    case challenge(PairingChallenge)
    /// See `PairingProof`.
    case proof(PairingProof)
    /// See `PairingConfirmation`.
    case confirmation(PairingConfirmation)
    /// See `PairingFailure`.
    case failure(PairingFailure)

    /// The message's wire type.
    public var type: PairingMessageType {
        switch self {
        case .start: .pairingStart
        case .challenge: .pairingChallenge
        case .proof: .pairingProof
        case .confirmation: .pairingConfirmation
        case .failure: .pairingFailure
        }
    }

    /// The message as a frame (UTF-8 JSON with sorted keys).
    public func frame() -> Frame {
        let payload: [UInt8]
        switch self {
        case .start(let body): payload = JSONPayload.encode(body)
        case .challenge(let body): payload = JSONPayload.encode(body)
        case .proof(let body): payload = JSONPayload.encode(body)
        case .confirmation(let body): payload = JSONPayload.encode(body)
        case .failure(let body): payload = JSONPayload.encode(body)
        }
        return Frame(type: type.rawValue, payload: payload)
    }

    /// Decodes and validates a frame: every field is bounded (see `PairingFieldLimits`).
    /// - Throws: `ProtocolError` `.unknownMessageType` for a type outside 30–34, `.malformedMessage` for a
    ///   payload that is not the message's JSON or breaks a bound.
    public init(_ frame: Frame) throws(ProtocolError) {
        guard let type = PairingMessageType(rawValue: frame.type) else {
            throw ProtocolError(.unknownMessageType, "unknown pairing message type \(frame.type)")
        }
        func decode<T: Decodable>(_: T.Type) throws(ProtocolError) -> T {
            try JSONPayload.decode(T.self, from: frame.payload, name: "\(type)")
        }
        switch type {
        case .pairingStart: self = .start(try decode(PairingStart.self))
        case .pairingChallenge: self = .challenge(try decode(PairingChallenge.self))
        case .pairingProof: self = .proof(try decode(PairingProof.self))
        case .pairingConfirmation: self = .confirmation(try decode(PairingConfirmation.self))
        case .pairingFailure: self = .failure(try decode(PairingFailure.self))
        }
    }
}
