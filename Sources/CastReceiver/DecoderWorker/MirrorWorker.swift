import CastBase
import CastMedia
import CastProtocol
import Foundation
import Glibc

/// A decoder worker that shows a mirror session (`PlayRequest.mirror`): `MirrorPlayer` on the channel's stream,
/// with no read-ahead, instead of the engine. The rest is `SessionWorker`'s: castd's controls come over the channel,
/// the events go back, and the worker exits once the finish was sent.
enum MirrorWorker {
    static func run(
        channel: WorkerChannel, source: ChannelSource, start: WorkerStart,
        send: @escaping @Sendable (PlaybackEvent) -> Void
    ) -> Never {
        let done = DispatchSemaphore(value: 0)
        let player = MirrorPlayer(source: source, configuration: start.configuration) { event in
            send(event)
            if case .finished = event { done.signal() }
        }
        player.perform(.volume(start.volume))
        player.perform(.mute(start.muted))
        startDetachedThread(name: "castd.worker.reader") {
            while true {
                let message: WorkerMessage?
                do {
                    message = try channel.receive(dataInto: source)
                } catch {
                    message = nil
                }
                guard let message else {
                    // castd is gone or broke the channel: stop (castd's death kills this process anyway).
                    source.cancel()
                    player.perform(.stop)
                    return
                }
                switch message {
                case .control(let control): player.perform(control.action)
                case .data, .readFailed: source.deliver(message)
                case .confine, .confined, .start, .read, .event, .unacceptableEvent, .thumbnailRequest,
                    .thumbnailCancel,
                    .thumbnail:
                    break
                }
            }
        }
        player.start()
        done.wait()
        exit(0)
    }
}
