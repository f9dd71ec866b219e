import CastBase

/// The messages between `cast` and its speaker decoder (`cast-decode`, the helper process that links FFmpeg so that
/// `cast` itself does not): requests for interleaved 16-bit PCM at 44.1 kHz stereo, and the replies. Framed as the
/// wire's frames (`Frame`), over a socket pair that only the two processes share. docs/architecture.md.
///
/// The helper opens the file named on its command line and replies `opened` (or `failed`) before any request; then
/// each request gets exactly one reply, in order.
public enum PCMPipeMessage: Sendable, Equatable {
    /// The helper opened its file; the duration when the container knows it. The first message, once.
    case opened(duration: Double?)
    /// Up to `frames` frames, please (1...`maximumFrames`).
    case read(frames: Int)
    /// Move to `seconds` (finite, not negative).
    case seek(seconds: Double)
    /// Interleaved samples in reply to `read`: at most the frames asked for, fewer only at the end, none after it.
    case samples([Int16])
    /// The seek was done.
    case seeked
    /// The file could not be opened, read or seeked; the text says why (at most `maximumTextLength` bytes).
    case failed(String)

    /// The most frames one `read` asks for.
    public static let maximumFrames = 8_192
    /// Channels of every reply's samples.
    public static let channels = 2
    /// The longest `failed` text.
    public static let maximumTextLength = 4_096
    /// The largest frame either side sends or accepts.
    public static let maximumFrameLength = 1 + maximumFrames * channels * 2

    private enum Tag: UInt8 {
        case opened = 0x6F, read = 0x72, seek = 0x73, samples = 0x70, seeked = 0x6B, failed = 0x65
    }

    /// The message as a frame.
    public var frame: Frame {
        switch self {
        case .opened(let duration):
            return Frame(type: Tag.opened.rawValue, payload: duration.map { Self.bytes($0.bitPattern) } ?? [])
        case .read(let frames):
            return Frame(type: Tag.read.rawValue, payload: Self.bytes(UInt32(clamping: frames)))
        case .seek(let seconds):
            return Frame(type: Tag.seek.rawValue, payload: Self.bytes(seconds.bitPattern))
        case .samples(let samples):
            var payload = [UInt8](repeating: 0, count: samples.count * 2)
            for (index, sample) in samples.enumerated() {
                payload[2 * index] = UInt8(truncatingIfNeeded: UInt16(bitPattern: sample))
                payload[2 * index + 1] = UInt8(truncatingIfNeeded: UInt16(bitPattern: sample) >> 8)
            }
            return Frame(type: Tag.samples.rawValue, payload: payload)
        case .seeked:
            return Frame(type: Tag.seeked.rawValue, payload: [])
        case .failed(let text):
            return Frame(type: Tag.failed.rawValue, payload: Array(text.utf8.prefix(Self.maximumTextLength)))
        }
    }

    /// Decodes and checks a frame.
    /// - Throws: `ProtocolError` `.unknownMessageType` or `.malformedMessage`.
    public init(_ frame: Frame) throws(ProtocolError) {
        guard let tag = Tag(rawValue: frame.type) else {
            throw ProtocolError(.unknownMessageType, "decoder message type \(frame.type)")
        }
        let payload = frame.payload
        func malformed(_ what: String) -> ProtocolError { ProtocolError(.malformedMessage, "decoder message: \(what)") }
        switch tag {
        case .opened:
            guard payload.isEmpty || payload.count == 8 else { throw malformed("opened of \(payload.count) bytes") }
            if payload.isEmpty {
                self = .opened(duration: nil)
            } else {
                let duration = Double(bitPattern: Self.integer(payload))
                guard duration.isFinite, duration >= 0 else { throw malformed("duration \(duration)") }
                self = .opened(duration: duration)
            }
        case .read:
            guard payload.count == 4 else { throw malformed("read of \(payload.count) bytes") }
            let frames = Int(UInt32(truncatingIfNeeded: Self.integer(payload)))
            guard (1...Self.maximumFrames).contains(frames) else { throw malformed("read of \(frames) frames") }
            self = .read(frames: frames)
        case .seek:
            guard payload.count == 8 else { throw malformed("seek of \(payload.count) bytes") }
            let seconds = Double(bitPattern: Self.integer(payload))
            guard seconds.isFinite, seconds >= 0 else { throw malformed("seek to \(seconds)") }
            self = .seek(seconds: seconds)
        case .samples:
            guard payload.count % (2 * Self.channels) == 0 else { throw malformed("samples of \(payload.count) bytes") }
            var samples = [Int16](repeating: 0, count: payload.count / 2)
            for index in samples.indices {
                samples[index] = Int16(bitPattern: UInt16(payload[2 * index]) | UInt16(payload[2 * index + 1]) << 8)
            }
            self = .samples(samples)
        case .seeked:
            guard payload.isEmpty else { throw malformed("seeked with a payload") }
            self = .seeked
        case .failed:
            guard payload.count <= Self.maximumTextLength else { throw malformed("failed text too long") }
            self = .failed(printable(String(decoding: payload, as: UTF8.self)))
        }
    }

    /// Little-endian bytes of `value`.
    private static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// The little-endian integer of `bytes` (at most 8).
    private static func integer(_ bytes: [UInt8]) -> UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << ($1.offset * 8) }
    }
}
