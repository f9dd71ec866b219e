/// The SDP body of ANNOUNCE for uncompressed, unencrypted audio: `a=rtpmap:96 L16/44100/2` and no `fmtp`
/// line, which shairport-sync takes as 16-bit big-endian stereo PCM at 44.1 kHz. No `rsaaeskey`/`aesiv`: the
/// stream is not encrypted, so no RSA key (Apple's private one) is needed.
public struct SpeakerAnnouncement: Sendable, Equatable {
    /// The session id in the `o=` line and the request URI.
    public var sessionID: UInt32
    /// Our address as the speaker sees it (the RTSP connection's local address).
    public var localAddress: String
    /// The speaker's address.
    public var speakerAddress: String

    /// Sample rate and channels of the stream: fixed for AirPlay 1 L16.
    public static let sampleRate = 44_100
    public static let channels = 2

    /// Creates the announcement.
    public init(sessionID: UInt32, localAddress: String, speakerAddress: String) {
        self.sessionID = sessionID
        self.localAddress = localAddress
        self.speakerAddress = speakerAddress
    }

    /// The SDP text (CRLF line ends).
    public var sdp: String {
        let family = { (address: String) in address.contains(":") ? "IP6" : "IP4" }
        return [
            "v=0",
            "o=cast \(sessionID) 0 IN \(family(localAddress)) \(localAddress)",
            "s=cast",
            "c=IN \(family(speakerAddress)) \(speakerAddress)",
            "t=0 0",
            "m=audio 0 RTP/AVP 96",
            "a=rtpmap:96 L16/\(Self.sampleRate)/\(Self.channels)",
        ].map { $0 + "\r\n" }.joined()
    }
}

/// The UDP ports of a stream: ours (where the speaker sends timing requests and resend requests) and the
/// speaker's (where audio, sync packets and timing replies go), from the `Transport` headers of SETUP.
public struct SpeakerPorts: Sendable, Equatable {
    /// The speaker's audio port (`server_port`).
    public var server: UInt16
    /// The speaker's control port (sync packets go there).
    public var control: UInt16
    /// The speaker's timing port.
    public var timing: UInt16

    /// Creates a set of ports.
    public init(server: UInt16, control: UInt16, timing: UInt16) {
        self.server = server
        self.control = control
        self.timing = timing
    }

    /// The `Transport` header of our SETUP: UDP, with our control and timing ports.
    public static func request(control: UInt16, timing: UInt16) -> String {
        "RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=\(control);timing_port=\(timing)"
    }

    /// The speaker's ports from its SETUP answer's `Transport` header (`server_port`, `control_port`,
    /// `timing_port`, each 1...65535).
    /// - Throws: `RAOPError` `.missingTransport` when one is missing or not a port.
    public init(transport: String) throws(RAOPError) {
        var found: [String: UInt16] = [:]
        for parameter in transport.split(separator: ";") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].lowercased().trimmingSpaces()
            guard ["server_port", "control_port", "timing_port"].contains(key) else { continue }
            let text = String(pair[1]).trimmingSpaces()
            guard text.count <= 5, let port = UInt16(text), port > 0 else {
                throw RAOPError(.missingTransport, "the speaker's Transport has a bad \(key): \"\(text.prefix(20))\"")
            }
            found[key] = port
        }
        guard let server = found["server_port"], let control = found["control_port"], let timing = found["timing_port"]
        else {
            throw RAOPError(.missingTransport, "the speaker's Transport lacks a port: \"\(transport.prefix(200))\"")
        }
        self.init(server: server, control: control, timing: timing)
    }
}

/// The volume a speaker is told in `SET_PARAMETER volume: DB`: 0 dB is full, -30 dB the quietest audible step,
/// -144 mute (AirPlay 1's scale, which shairport-sync maps onto its own range).
public enum SpeakerVolume {
    /// The level for mute.
    public static let muteDecibels = -144.0
    /// The quietest audible level.
    public static let minimumDecibels = -30.0

    /// A level 0...1 (the sender's scale) in the speaker's dB: linear in dB from -30 to 0, 0 mutes.
    public static func decibels(forLevel level: Double) -> Double {
        guard level.isFinite, level > 0 else { return muteDecibels }
        return minimumDecibels * (1 - min(level, 1))
    }

    /// The `text/parameters` body that sets it.
    public static func parameterBody(decibels: Double) -> [UInt8] {
        let rounded = (decibels * 1_000_000).rounded() / 1_000_000
        return Array("volume: \(rounded)\r\n".utf8)
    }
}

/// The parts of an RAOP service instance name: `AABBCCDDEEFF@Kitchen` is the speaker "Kitchen" whose hardware
/// address is AA:BB:CC:DD:EE:FF. A name without that prefix is shown whole.
public struct SpeakerInstanceName: Sendable, Equatable {
    /// The friendly name: after the `@`.
    public var name: String
    /// The 12 hex digits before the `@`, when present.
    public var hardwareAddress: String?

    /// Splits an instance name.
    public init(_ instance: String) {
        if let at = instance.firstIndex(of: "@"), at != instance.startIndex {
            let prefix = instance[..<at]
            let rest = instance[instance.index(after: at)...]
            if prefix.count == 12, prefix.allSatisfy(\.isHexDigit), !rest.isEmpty {
                name = String(rest)
                hardwareAddress = String(prefix).uppercased()
                return
            }
        }
        name = instance
        hardwareAddress = nil
    }
}
