import CastProtocol
import CastSecurity
import CastSystem
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an AirPlay speaker stream sends: interleaved signed 16-bit PCM, 44.1 kHz stereo. CastKit reads it in process
/// (the engine's `PCMReader`); `cast`, which links no FFmpeg, reads it from its decoder helper (`PCMDecoderProcess`).
///
/// Thread-safety: one thread uses a source at a time (the stream's own), which may differ from the one that made it.
public protocol PCMSource: AnyObject, Sendable {
    /// The input's duration in seconds, when the container knows it.
    var duration: Double? { get }
    /// Up to `frames` frames (`frames × 2` samples), fewer only at the end; an empty array at the end.
    func read(frames: Int) throws -> [Int16]
    /// Moves to `seconds` into the input.
    func seek(to seconds: Double) throws
}

/// A file decoded by `cast-decode`, the helper process next to the running executable that links FFmpeg (as castd's
/// decoder worker does for castd), so that `cast` starts without loading it. Reads ask the helper for a block of
/// frames ahead and hand them out from it. The helper ends with the source (it is killed, it keeps no state).
///
/// Thread-safety: one exchange with the helper at a time, and the frames it sent ahead, under a `Mutex`.
public final class PCMDecoderProcess: PCMSource, Sendable {
    /// The helper's program name; it is looked for beside the running executable.
    public static let programName = "cast-decode"
    /// How long one reply may take: decoding a block is milliseconds; a helper that takes this long is stuck.
    static let replyTimeout: Duration = .seconds(10)

    /// The frames the helper sent and no read has taken yet, and whether it said the input ended.
    private struct Ahead {
        var duration: Double?
        var pending: ArraySlice<Int16> = []
        var ended = false
    }

    public var duration: Double? { ahead.withLock { $0.duration } }
    private let ahead = Mutex(Ahead())
    private let channel: FramedStream
    private let pid: pid_t
    /// The helper's process id (for tests).
    var helperPID: pid_t { pid }

    private init(channel: FramedStream, pid: pid_t) {
        self.channel = channel
        self.pid = pid
    }

    deinit {
        channel.shutdown()
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }

    /// Starts the helper on `path` and waits for it to open the file.
    /// - Throws: `CastError` `.playback` when the helper is missing or cannot start, or the file has no audio it
    ///   can decode.
    public static func open(_ path: String) throws(CastError) -> PCMDecoderProcess {
        let program = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
        ).deletingLastPathComponent().appendingPathComponent(programName).path
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw CastError(.playback, "cannot start the decoder: \(String(cString: strerror(errno)))")
        }
        let pid: pid_t
        do {
            pid = try spawn(program, path, channel: ends[1])
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[1])
        // From here on the source owns the helper: a failure below kills and reaps it as the source goes.
        let source = PCMDecoderProcess(
            channel: FramedStream(fd: ends[0], maximumFrameLength: PCMPipeMessage.maximumFrameLength), pid: pid)
        switch try source.reply() {
        case .opened(let duration): source.ahead.withLock { $0.duration = duration }
        case let other: throw source.unexpected(other)
        }
        return source
    }

    public func read(frames: Int) throws -> [Int16] {
        let wanted = frames * PCMPipeMessage.channels
        return try ahead.withLock { ahead in
            while ahead.pending.count < wanted && !ahead.ended {
                try request(.read(frames: PCMPipeMessage.maximumFrames / 2))
                switch try reply() {
                case .samples(let samples):
                    if samples.isEmpty { ahead.ended = true }
                    ahead.pending = ahead.pending.isEmpty ? samples[...] : (Array(ahead.pending) + samples)[...]
                case let other: throw unexpected(other)
                }
            }
            let out = Array(ahead.pending.prefix(wanted))
            ahead.pending = ahead.pending.dropFirst(out.count)
            return out
        }
    }

    public func seek(to seconds: Double) throws {
        try ahead.withLock { ahead in
            try request(.seek(seconds: max(0, seconds.isFinite ? seconds : 0)))
            switch try reply() {
            case .seeked:
                ahead.pending = []
                ahead.ended = false
            case let other: throw unexpected(other)
            }
        }
    }

    // MARK: The helper

    private func request(_ message: PCMPipeMessage) throws(CastError) {
        do {
            try channel.send(message.frame, timeout: Self.replyTimeout)
        } catch {
            throw CastError(.playback, "the decoder stopped: \(error)")
        }
    }

    /// The helper's next reply; its `failed` is thrown.
    private func reply() throws(CastError) -> PCMPipeMessage {
        let message: PCMPipeMessage
        do {
            guard let frame = try channel.receive(timeout: Self.replyTimeout) else {
                throw CastError(.playback, "the decoder ended unexpectedly")
            }
            message = try PCMPipeMessage(frame)
        } catch let error as CastError {
            throw error
        } catch {
            throw CastError(.playback, "the decoder failed: \(error)")
        }
        if case .failed(let text) = message { throw CastError(.playback, text) }
        return message
    }

    private func unexpected(_ message: PCMPipeMessage) -> CastError {
        CastError(.playback, "the decoder replied out of turn (\(message.frame.type))")
    }

    /// Starts `program path` with `channel` as its standard input and output; its standard error is ours.
    private static func spawn(_ program: String, _ path: String, channel: Int32) throws(CastError) -> pid_t {
        do {
            return try ProcessSpawn.spawn(
                program, arguments: [programName, path],
                descriptors: [.duplicate(channel, to: 0), .duplicate(channel, to: 1)])
        } catch {
            throw CastError(.playback, "cannot start the decoder: \(error)")
        }
    }
}
