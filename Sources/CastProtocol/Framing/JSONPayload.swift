import FoundationEssentials

/// The JSON coding every message payload shares: sorted keys (stable bytes on the wire), and
/// decoding failures turned into `malformedMessage` with a short reason a person can act on.
enum JSONPayload {
    /// Encodes a payload. Our own types always encode.
    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            preconditionFailure("encoding a message cannot fail: \(error)")
        }
    }

    /// Decodes a payload of the message called `name`.
    /// - Throws: `ProtocolError` `.malformedMessage` saying what is wrong and where.
    /// `name` is only formatted for an error: describing an enum case (`"\(type)"`) goes through the runtime's
    /// reflection, a twentieth of `cast status`'s instructions when it was done for every message.
    static func decode<T: Decodable>(_: T.Type, from payload: [UInt8], name: @autoclosure () -> String)
        throws(ProtocolError) -> T
    {
        do {
            return try JSONDecoder().decode(T.self, from: Data(payload))
        } catch {
            throw ProtocolError(.malformedMessage, "\(name()) payload does not decode: \(describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing key '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at '\(path(context))'"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "not JSON" : "bad value at '\(path(context))': \(context.debugDescription)"
        default: "\(error)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map(\.stringValue).joined(separator: ".")
    }
}
