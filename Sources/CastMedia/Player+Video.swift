import CastProtocol
import Foundation

extension Player {
    /// Changes how `.window` and `.fullscreen` fit pictures to the screen, at once, also for the picture on screen.
    /// The window is the process's one window, so the mode applies to it, not only to this player's stream.
    /// Does nothing for other video outputs.
    public func setScalingMode(_ mode: ScalingMode) {
        switch configuration.video {
        case .window, .fullscreen: WindowOutput.shared.setScalingMode(mode)
        case .none, .framemd5: break
        }
    }

    /// The video output thread: holds each frame until the clock reaches it, then presents it.
    /// No frame is dropped: a late frame is presented at once (framemd5 must see every frame).
    func runVideoOutput(frames: BoundedQueue<Frame>, timing: StreamTiming) {
        do {
            try presentVideo(frames: frames, timing: timing)
        } catch is Stopped {
        } catch {
            fail(error)
        }
    }

    private func presentVideo(frames: BoundedQueue<Frame>, timing: StreamTiming) throws {
        let presenters = try makePresenters(timing: timing)
        defer { for presenter in presenters { presenter.close() } }
        let startTime = configuration.startTime
        var first: Frame?
        while first == nil {
            guard let item = frames.take() else { return }
            guard case .item(let frame) = item else { break }
            if startTime > 0, let t = timing.seconds(of: frame), t + timing.duration(of: frame) <= startTime { continue }
            first = frame
        }
        if first != nil { emit(.readyForDisplay) }
        var time = first.map { timing.seconds(of: $0) ?? startTime }
        offerFirstFrame(at: time)
        guard control.arrive(thenStart: startClockFromPreroll) else { return }
        guard var frame = first, var due = time else { return }
        while true {
            try waitUntilDue(due)
            for presenter in presenters { try presenter.present(frame) }
            videoBecameActive()
            let length = timing.duration(of: frame)
            guard let item = frames.take() else { return }
            guard case .item(let next) = item else {
                // Hold the last frame for its duration, so video-only media play for their whole length.
                try waitUntilDue(due + length)
                return
            }
            frame = next
            time = timing.seconds(of: frame)
            due = time ?? due + length
        }
    }

    /// The presenters that `configuration.video` asks for (none for `.none`: frames are only timed).
    private func makePresenters(timing: StreamTiming) throws -> [any VideoPresenter] {
        switch configuration.video {
        case .none:
            return []
        case .framemd5(let path):
            return [
                try FrameMD5Writer(
                    path: path, streamTimeBase: timing.timeBase, frameRate: timing.frameRate,
                    containerStartTime: timing.mappedStart)
            ]
        case .window:
            return [try WindowPresenter(mode: .windowed, scaling: configuration.scalingMode)]
        case .fullscreen:
            return [try WindowPresenter(mode: .fullscreen, scaling: configuration.scalingMode)]
        }
    }

    /// Waits until media time `media` is due on the clock; throws `Stopped` when playback is being stopped.
    private func waitUntilDue(_ media: Double) throws {
        while true {
            switch control.current {
            case .stopping: throw Stopped()
            case .paused: guard control.waitWhilePaused() else { throw Stopped() }
            case .playing:
                guard let due = clock.dueTime(of: media) else {
                    control.sleep(until: Monotonic.now() + 10_000_000)
                    continue
                }
                if Monotonic.now() >= due { return }
                control.sleep(until: due, limit: 0.02)
            }
        }
    }
}
