import CastBase
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
        let (report, listener) = sandbox.enter()
        WorkerSandbox.handOver(listener, over: WorkerProcess.channelDescriptor)
        try? channel.send(.confined(report))
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
        if start.mirror == true, start.media != nil { MirrorWorker.run(channel: channel, start: start, send: send) }
        let served = start.media.map {
            ChannelSource(channel: channel, media: $0, readsInFlight: ChannelSource.sessionReadsInFlight)
        }
        let input: MediaInput
        if let served {
            // The read-ahead lives here, beside the engine, as it does in castd: its statistics drive the load state.
            input = .source(ReadAheadSource(served))
        } else {
            input = .url(start.url ?? "", proxy: start.urlProxy, formats: start.urlFormats ?? .any)
        }
        let player = Player(input: input, configuration: configuration, onEvent: send)
        for control in early { player.perform(control.action) }
        player.setVolume(start.volume)
        player.setMuted(start.muted)
        startDetachedThread(name: "castd.worker.reader") {
            while true {
                let message: WorkerMessage?
                do {
                    message = try channel.receive(dataInto: served)
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
                case .confine, .confined, .start, .read, .event, .unacceptableEvent, .thumbnailRequest,
                    .thumbnailCancel, .thumbnail:
                    break
                }
            }
        }
        player.start()
        done.wait()
        exit(0)
    }

    private static func refuse(_ message: String) -> Never {
        FileHandle.standardError.write(Data("castd: \(message)\n".utf8))
        exit(2)
    }
}
