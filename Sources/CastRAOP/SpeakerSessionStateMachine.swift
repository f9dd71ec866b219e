/// The sender's side of one RAOP session: which RTSP request comes when, and what each answer means. No I/O
/// (after swift-nio-ssh's state machines): the connection sends the requests it returns, feeds it the
/// responses, and carries out the actions. One request is in flight at a time, as RTSP senders do.
///
/// ANNOUNCE → SETUP → RECORD → streaming ⇄ (FLUSH) paused; SET_PARAMETER while streaming or paused;
/// TEARDOWN from any state once started.
///
/// Thread-safety: a value type; the session thread owns it.
public struct SpeakerSessionStateMachine: Sendable {
    /// What the I/O layer must do after a response.
    public enum Action: Sendable, Equatable {
        /// Send this request next.
        case send(RTSPRequest)
        /// RECORD was accepted: start sending audio, sync and timing replies to these ports. `latency` is the
        /// speaker's `Audio-Latency` in frames when it said.
        case startStreaming(SpeakerPorts, latency: Int?)
        /// A FLUSH was accepted: the speaker dropped what it held; send nothing until resumed.
        case paused
        /// A SET_PARAMETER (volume) was accepted.
        case volumeSet
        /// TEARDOWN was accepted: close the connection.
        case closed
    }

    private enum State: Sendable, Equatable {
        /// Nothing sent yet.
        case idle
        /// ANNOUNCE, SETUP or RECORD in flight (the pending request says which).
        case starting
        /// Audio flows.
        case streaming(SpeakerPorts)
        /// Flushed: no audio until `resume()`.
        case paused(SpeakerPorts)
        /// TEARDOWN answered, or the session failed.
        case closed
    }

    private struct Pending: Sendable, Equatable {
        var method: String
        var cseq: Int
    }

    private var state: State = .idle
    private var pending: Pending?
    private var nextCSeq = 1
    private let uri: String
    private let commonHeaders: [(name: String, value: String)]
    private var ports: SpeakerPorts?
    private let announcement: SpeakerAnnouncement
    private let localControlPort: UInt16
    private let localTimingPort: UInt16
    private let firstSequence: UInt16
    private let firstTimestamp: UInt32
    /// The `Session` the speaker named in its SETUP answer ("1" until then).
    private var session = "1"

    /// A session for `announcement`; our UDP ports are already bound. The first audio packet will carry
    /// `firstSequence` and `firstTimestamp` (random, as RTP asks; RECORD tells the speaker). `clientInstance` is
    /// a random 16-hex-digit id (`Client-Instance`/`DACP-ID`), `userAgent` names us.
    public init(
        announcement: SpeakerAnnouncement, controlPort: UInt16, timingPort: UInt16, firstSequence: UInt16,
        firstTimestamp: UInt32, clientInstance: String, userAgent: String = "Cast/1.0"
    ) {
        self.announcement = announcement
        self.firstSequence = firstSequence
        self.firstTimestamp = firstTimestamp
        localControlPort = controlPort
        localTimingPort = timingPort
        let host =
            announcement.localAddress.contains(":") ? "[\(announcement.localAddress)]" : announcement.localAddress
        uri = "rtsp://\(host)/\(announcement.sessionID)"
        commonHeaders = [("User-Agent", userAgent), ("Client-Instance", clientInstance), ("DACP-ID", clientInstance)]
    }

    /// Whether a request waits for its answer (the I/O layer must read one before asking for another request).
    public var isAwaitingResponse: Bool { pending != nil }
    /// Whether audio should flow now.
    public var isStreaming: Bool { if case .streaming = state { true } else { false } }
    /// Whether the session is paused (flushed).
    public var isPaused: Bool { if case .paused = state { true } else { false } }
    /// Whether the session ended.
    public var isClosed: Bool { state == .closed }

    /// The first request: ANNOUNCE with the SDP.
    public mutating func start() -> (request: RTSPRequest, cseq: Int) {
        precondition(state == .idle && pending == nil, "start() twice")
        state = .starting
        return make(
            "ANNOUNCE", [("Content-Type", "application/sdp")], body: Array(announcement.sdp.utf8))
    }

    /// FLUSH everything from `sequence`/`timestamp` (the next packet we would have sent) on: pause. Nil when not
    /// streaming or a request is in flight.
    public mutating func pause(nextSequence sequence: UInt16, nextTimestamp timestamp: UInt32) -> (
        request: RTSPRequest, cseq: Int
    )? {
        guard case .streaming = state, pending == nil else { return nil }
        return make("FLUSH", [("Session", session), ("RTP-Info", "seq=\(sequence);rtptime=\(timestamp)")])
    }

    /// Resume after a pause: audio may flow again (the first sync after it carries the "first" bit). False when
    /// not paused.
    public mutating func resume() -> Bool {
        guard case .paused(let ports) = state, pending == nil else { return false }
        state = .streaming(ports)
        return true
    }

    /// SET_PARAMETER `volume: DB`. Nil before RECORD was answered, after the end, or with a request in flight.
    public mutating func setVolume(decibels: Double) -> (request: RTSPRequest, cseq: Int)? {
        guard pending == nil else { return nil }
        switch state {
        case .streaming, .paused:
            return make(
                "SET_PARAMETER", [("Session", session), ("Content-Type", "text/parameters")],
                body: SpeakerVolume.parameterBody(decibels: decibels))
        case .idle, .starting, .closed:
            return nil
        }
    }

    /// TEARDOWN. Nil when nothing was started, it already ended, or a request is in flight.
    public mutating func stop() -> (request: RTSPRequest, cseq: Int)? {
        guard pending == nil, state != .idle, state != .closed else { return nil }
        return make("TEARDOWN", [("Session", session)])
    }

    /// The I/O layer gave up on the session (the connection broke): nothing more is sent.
    public mutating func fail() {
        state = .closed
        pending = nil
    }

    /// Feeds the answer to the request in flight.
    /// - Throws: `RAOPError` `.unexpectedResponse` (no request in flight, another CSeq), `.refused` (a status
    ///   other than 200: 401 needs a password, 453 means busy with another sender) or `.missingTransport`.
    public mutating func receive(_ response: RTSPResponse) throws(RAOPError) -> Action {
        guard let waiting = pending else {
            throw RAOPError(.unexpectedResponse, "the speaker answered a request we did not make")
        }
        guard response.cseq == waiting.cseq else {
            throw RAOPError(
                .unexpectedResponse,
                "the speaker answered CSeq \(response.header("CSeq").map { String($0.prefix(12)) } ?? "none"), not \(waiting.cseq)"
            )
        }
        pending = nil
        guard response.status == 200 else {
            state = .closed
            throw RAOPError(
                .refused, "the speaker refused \(waiting.method): \(response.status) \(response.reason.prefix(80))",
                status: response.status)
        }
        switch waiting.method {
        case "ANNOUNCE":
            let transport = SpeakerPorts.request(control: localControlPort, timing: localTimingPort)
            return .send(make("SETUP", [("Transport", transport)]).request)
        case "SETUP":
            guard let transport = response.header("Transport") else {
                state = .closed
                throw RAOPError(.missingTransport, "the speaker's SETUP answer has no Transport header")
            }
            // Echoed in later requests: a token of at most 64 visible characters, else our own "1".
            if let named = response.header("Session")?.split(separator: ";").first.map(String.init),
                (1...64).contains(named.count), named.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
            {
                session = named
            }
            do {
                ports = try SpeakerPorts(transport: transport)
            } catch {
                state = .closed
                throw error
            }
            return .send(
                make(
                    "RECORD",
                    [
                        ("Session", session), ("Range", "npt=0-"),
                        ("RTP-Info", "seq=\(firstSequence);rtptime=\(firstTimestamp)"),
                    ]
                ).request)
        case "RECORD":
            guard let ports else { preconditionFailure("RECORD answered before SETUP") }
            state = .streaming(ports)
            let latency = response.header("Audio-Latency").flatMap { Int($0) }.flatMap {
                (0...441_000).contains($0) ? $0 : nil
            }
            return .startStreaming(ports, latency: latency)
        case "FLUSH":
            if case .streaming(let ports) = state { state = .paused(ports) }
            return .paused
        case "SET_PARAMETER":
            return .volumeSet
        case "TEARDOWN":
            state = .closed
            return .closed
        default:
            preconditionFailure("an answer to \(waiting.method), which this machine never sends")
        }
    }

    /// The CSeq the next request will carry.
    public var upcomingCSeq: Int { nextCSeq }

    private mutating func make(_ method: String, _ headers: [(name: String, value: String)], body: [UInt8] = [])
        -> (request: RTSPRequest, cseq: Int)
    {
        let cseq = nextCSeq
        nextCSeq += 1
        pending = Pending(method: method, cseq: cseq)
        return (RTSPRequest(method: method, uri: uri, headers: headers + commonHeaders, body: body), cseq)
    }
}
