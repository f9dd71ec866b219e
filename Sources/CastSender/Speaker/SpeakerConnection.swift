import CastRAOP
import CastSecurity
import CastSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The RTSP connection to a speaker (TCP): one request at a time, each answer read with a deadline and through
/// the bounded `RTSPResponseParser`, so a speaker that stalls, floods or babbles ends in an error, not a hang.
///
/// Thread-safety: used by the session thread only.
final class SpeakerConnection {
    let fd: Int32
    /// Our address as the speaker sees it.
    let localHost: String
    private var parser = RTSPResponseParser()
    /// How long an answer may take.
    static let responseTimeout: Duration = .seconds(5)

    /// Connects within `timeout`.
    init(host: String, port: UInt16, timeout: Duration) throws {
        fd = try TCP.connect(host: host, port: port, timeout: timeout)
        localHost = SocketAddress.localHost(of: fd) ?? "0.0.0.0"
    }

    deinit { Glibc.close(fd) }

    /// Writes a request and reads its answer.
    func exchange(_ request: RTSPRequest, cseq: Int) throws -> RTSPResponse {
        try write(request.encoded(cseq: cseq))
        return try readResponse(deadline: ContinuousClock.now + Self.responseTimeout)
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw SpeakerSocketError("send(RTSP)")
            }
            offset += written
        }
    }

    private func readResponse(deadline: ContinuousClock.Instant) throws -> RTSPResponse {
        while true {
            if let response = try parser.nextResponse() { return response }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw SpeakerSocketError(message: "the speaker did not answer within \(Self.responseTimeout)")
            }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            guard try readSome(waitingMilliseconds: milliseconds) else {
                throw SpeakerSocketError(message: "the speaker closed the connection")
            }
        }
    }

    /// Waits up to `milliseconds` for bytes and feeds what comes to the parser. False at end of stream.
    private func readSome(waitingMilliseconds milliseconds: Int32) throws -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return true }
            throw SpeakerSocketError("poll(RTSP)")
        }
        guard ready > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return true }
            throw SpeakerSocketError("recv(RTSP)")
        }
        if count == 0 { return false }
        parser.append(buffer[..<count])
        return true
    }

    /// Whether the speaker is still there: false once it closed the connection or it broke. Anything it sent
    /// unasked goes to the parser (and its limits); a response nobody asked for is an error there.
    func isAlive() throws -> Bool {
        guard try readSome(waitingMilliseconds: 0) else { return false }
        if parser.bufferedByteCount > 0, let unasked = try parser.nextResponse() {
            throw RAOPError(.unexpectedResponse, "the speaker sent a response nobody asked for (\(unasked.status))")
        }
        return true
    }
}
