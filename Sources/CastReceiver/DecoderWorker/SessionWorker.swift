import CastMedia
import CastProtocol
import Foundation
import Glibc

/// The worker's side of decoder isolation: `castd --session-worker PARENT`, started by castd for one session (see
/// `DecoderProcess`). It confines itself, takes the start message, plays with the ordinary engine and sends its
/// events back; it exits once the finish was sent, and dies with castd.
public enum SessionWorker {
    /// Whether castd was started as a decoder worker: exactly `--session-worker` first. Anything else is castd.
    public static func isRequested(_ arguments: [String]) -> Bool {
        arguments.count >= 2 && arguments[1] == WorkerProcess.flag
    }

    /// Runs the worker; never returns. Exits 2 when castd did not start it (see `WorkerProcess.confine`).
    public static func run(arguments: [String]) -> Never {
        guard arguments.count == 3, let parent = pid_t(arguments[2]), parent > 1 else {
            refuse("--session-worker is internal to castd (see castd --help)")
        }
        do {
            try WorkerProcess.confine(parent: parent)
        } catch {
            refuse("--session-worker is internal to castd: \(error)")
        }
        // The worker's standard error is castd's: FFmpeg's lines read as castd's own.
        Logger.standardError().takeFFmpegLines()
        let channel = WorkerChannel(
            fd: WorkerProcess.channelDescriptor, incoming: WorkerMessage.maximumToWorker,
            decode: WorkerMessage.fromCastd)
        // The sandbox comes before anything of a session: a spare waits for its start sandboxed already.
        guard case .confine(let sandbox)? = try? channel.receive() else { refuse("castd sent no confine message") }
        try? channel.send(.confined(sandbox.enter()))
        guard case .start(let start)? = try? channel.receive() else { refuse("castd sent no start message") }
        let done = DispatchSemaphore(value: 0)
        let send: @Sendable (PlaybackEvent) -> Void = { event in
            try? channel.send(.event(event))
            if case .finished = event { done.signal() }
        }
        do {
            try WorkerProcess.apply(start.limits)
        } catch {
            send(.playbackState(.stopped))
            send(.finished(reason: .playbackError, error: "the decoder process cannot limit itself: \(error)"))
            exit(1)
        }
        if start.thumbnails == true { ThumbnailWorker.run(channel: channel, start: start) }
        var configuration = start.configuration
        // The subtitle file is read whole before the engine and its read-ahead run: the only read in flight, so its
        // answers come in order. A control castd sends meanwhile is applied once the engine exists.
        var early: [PlaybackControl] = []
        if let file = start.subtitles {
            configuration.subtitleFile = SubtitleFileReader.read(file, over: channel) { early.append($0) }
        }
        let served = start.media.map { ChannelSource(channel: channel, media: $0) }
        let input: MediaInput
        if let served {
            // The read-ahead lives here, beside the engine, as it does in castd: its statistics drive the load state.
            input = .source(ReadAheadSource(served))
        } else {
            input = .url(start.url ?? "", proxy: start.urlProxy)
        }
        let player = Player(input: input, configuration: configuration, onEvent: send)
        for control in early { player.perform(control.action) }
        player.setVolume(start.volume)
        player.setMuted(start.muted)
        let reader = Thread {
            while true {
                let message: WorkerMessage?
                do {
                    message = try channel.receive { offset, bytes in served?.deliver(offset: offset, bytes: bytes) }
                } catch {
                    message = nil
                }
                guard let message else {
                    // castd is gone or broke the channel: stop (castd's death kills this process anyway).
                    served?.cancel()
                    player.stop()
                    return
                }
                switch message {
                case .control(let control): player.perform(control.action)
                case .data, .readFailed: served?.deliver(message)
                case .confine, .confined, .start, .read, .event, .thumbnailRequest, .thumbnailCancel, .thumbnail: break
                }
            }
        }
        reader.name = "castd.worker.reader"
        reader.start()
        player.start()
        done.wait()
        exit(0)
    }

    private static func refuse(_ message: String) -> Never {
        FileHandle.standardError.write(Data("castd: \(message)\n".utf8))
        exit(2)
    }
}

/// The served media as the worker sees it: each read asks castd for a byte range over the channel and waits for
/// the answer (castd reads it from the sender's media connection). The answer's bytes are copied by the channel's
/// reader straight into the waiting read's buffer (`deliver(offset:bytes:)`), not into a message of their own.
///
/// Thread-safety: `read` and `seek` come from one thread at a time (the read-ahead's reader); `deliver` from the
/// worker's channel reader; `cancel` from any thread. The reply slot, the waiting read's buffer and the flags are
/// guarded by `condition`; `position` is only touched by the reading thread. The buffer is written by `deliver`
/// only while `read` waits for it under `condition`.
final class ChannelSource: MediaSource, @unchecked Sendable {
    private let channel: WorkerChannel
    private let media: WorkerStart.Media
    private let condition = NSCondition()
    private var position: Int64 = 0
    private var waiting: MediaRead?
    private var destination: UnsafeMutableRawBufferPointer?
    /// How many bytes `deliver(offset:bytes:)` copied into `destination`, once it has.
    private var delivered: Int?
    private var reply: WorkerMessage?
    private var cancelled = false

    /// How a read was answered: its bytes copied into its buffer already, or a message.
    private enum Answer {
        case copied(Int)
        case message(WorkerMessage)
    }

    init(channel: WorkerChannel, media: WorkerStart.Media) {
        self.channel = channel
        self.media = media
    }

    var size: Int64? { media.size }
    var isSeekable: Bool { media.seekable }
    var nameHint: String? { media.nameHint }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let length = min(buffer.count, MediaRead.maximumLength)
        guard length > 0 else { return 0 }
        let request = MediaRead(offset: position, length: length)
        try condition.withLock {
            if cancelled { throw WorkerFailure("the read was cancelled") }
            waiting = request
            destination = buffer
            delivered = nil
            reply = nil
        }
        try channel.send(.read(request))
        let answer = try condition.withLock { () -> Answer in
            defer {
                waiting = nil
                destination = nil
                delivered = nil
                reply = nil
            }
            while reply == nil && delivered == nil && !cancelled { condition.wait() }
            if let delivered { return .copied(delivered) }
            guard let reply else { throw WorkerFailure("the read was cancelled") }
            return .message(reply)
        }
        switch answer {
        case .copied(let count):
            position += Int64(count)
            return count
        case .message(.data(let data)):
            data.bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
            position += Int64(data.bytes.count)
            return data.bytes.count
        case .message(.readFailed(let message)):
            throw WorkerFailure(message)
        case .message(let other):
            throw WorkerFailure("castd answered a read with \(other.kind)")
        }
    }

    func seek(to offset: Int64) throws {
        guard media.seekable else { throw WorkerFailure("the media is a stream and cannot seek") }
        position = offset
    }

    func cancel() {
        condition.withLock {
            cancelled = true
            condition.broadcast()
        }
    }

    /// castd's answer to the read in progress; an answer to no read, or of the wrong offset or length, is dropped.
    func deliver(_ message: WorkerMessage) {
        condition.withLock {
            guard let waiting, reply == nil, delivered == nil else { return }
            if case .data(let data) = message {
                guard data.offset == waiting.offset, data.bytes.count <= waiting.length else { return }
            }
            reply = message
            condition.broadcast()
        }
    }

    /// The bytes of castd's answer to the read in progress, copied into its buffer; dropped as `deliver(_:)` drops.
    func deliver(offset: Int64, bytes: UnsafeRawBufferPointer) {
        condition.withLock {
            guard let waiting, let destination, reply == nil, delivered == nil, offset == waiting.offset,
                bytes.count <= waiting.length
            else { return }
            destination.copyMemory(from: bytes)
            delivered = bytes.count
            condition.broadcast()
        }
    }
}
