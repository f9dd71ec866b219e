import CastBase
import CastMedia
import CastProtocol
import Foundation
import Glibc

/// A decoder worker that shows a mirror session (`PlayRequest.mirror`): `MirrorPlayer` on the live stream castd
/// pushes (`PushedStreamSource`), instead of the engine. The mirror thread reads the channel itself: the pieces of
/// the stream go straight to the decoder, and castd's controls, which come between them, to the player. The events go
/// back as `SessionWorker`'s do, and the worker exits once the finish was sent.
enum MirrorWorker {
    static func run(channel: WorkerChannel, start: WorkerStart, send: @escaping @Sendable (PlaybackEvent) -> Void)
        -> Never
    {
        let done = DispatchSemaphore(value: 0)
        // The player takes the controls its own source receives: set before the source is first read.
        let route = Monitor<MirrorPlayer?>(nil)
        let source = PushedStreamSource(channel: channel) { action in route.withLock { $0 }?.perform(action) }
        let player = MirrorPlayer(source: source, configuration: start.configuration) { event in
            send(event)
            if case .finished = event { done.signal() }
        }
        route.withLock { $0 = player }
        player.perform(.volume(start.volume))
        player.perform(.mute(start.muted))
        player.start()
        done.wait()
        exit(0)
    }
}
