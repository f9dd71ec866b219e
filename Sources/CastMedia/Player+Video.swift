internal import CFFmpeg
public import CastProtocol
import Foundation

extension Player {
    /// How late (seconds) a frame may be presented before the pictures move the clock back, when they lead it:
    /// ffplay's AV_SYNC_THRESHOLD_MAX.
    static let videoLeadLateness = 0.1

    /// Changes how `.window` and `.fullscreen` fit pictures to the screen, at once, also for the picture on screen.
    /// The window is the process's one window, so the mode applies to it, not only to this player's stream.
    /// Does nothing for other video outputs.
    public func setScalingMode(_ mode: ScalingMode) {
        switch configuration.video {
        case .window, .fullscreen, .hosted: WindowOutput.shared.setScalingMode(mode)
        case .none, .framemd5: break
        }
    }

    /// The video output thread: holds each frame until the clock reaches it, then presents it.
    /// A window drops a frame that is so late that the next one is already due (ffplay's rule in video_refresh), and
    /// counts it (`droppedVideoFrames`); framemd5 drops nothing (it must see every frame): a late frame is presented
    /// at once.
    ///
    /// `leadsClock`: the media has no sound to pace the clock, so the pictures do (ffplay's video master): a frame
    /// presented later than `Player.videoLeadLateness` after it was due moves the clock back to it. A decoder slower
    /// than real time then plays the film slower instead of letting the clock run away from the pictures (to the end
    /// of the media while frames are still being decoded, with the position standing there and looking to the
    /// worker's CPU budget like no progress at all), and the buffering rule does not take a slow decoder for a slow
    /// network.
    func runVideoOutput(
        frames: BoundedQueue<Frame>, timing: StreamTiming, streamName: String, caption: [String] = [],
        leadsClock: Bool = false
    ) {
        do {
            try presentVideo(
                frames: frames, timing: timing, streamName: streamName, caption: caption, leadsClock: leadsClock)
        } catch is Stopped {
        } catch {
            fail(error)
        }
    }

    /// Plays segment after segment (one per seek) until every output reached the end of the same one.
    private func presentVideo(
        frames: BoundedQueue<Frame>, timing: StreamTiming, streamName: String, caption: [String], leadsClock: Bool
    ) throws {
        let presenters = try makePresenters(timing: timing, streamName: streamName, caption: caption)
        defer { for presenter in presenters { presenter.close() } }
        var reader = SegmentReader(frames: frames, control: control)
        var announcedReady = false
        // The display size of the pictures shown so far: a stream that switches resolution announces the new one.
        var shownSize: DisplaySize?
        while true {
            // The segment's first frame: after an exact seek, the one whose interval contains the target.
            let segment = reader.segment
            let start = reader.firstFrame { frame, target in
                guard let t = timing.seconds(of: frame) else { return false }
                return t + timing.duration(of: frame) <= target + 1e-6
            }
            guard let start else { return }
            guard case .first(let first) = start else { continue }
            if first != nil && !announcedReady {
                announcedReady = true
                emit(.readyForDisplay)
            }
            let time = first.map { timing.seconds(of: $0) ?? segment.target ?? configuration.startTime }
            let anchor: Double
            switch control.arrive(serial: segment.serial, firstFrameAt: time, thenStart: startSegment) {
            case .stopping: return
            case .superseded:
                reader.catchUp()
                continue
            case .passed(let at): anchor = at
            }
            if segment.serial > 0 { for presenter in presenters { presenter.restart() } }
            do {
                if let first {
                    var timeline = PresentationTimeline(maxJump: timing.maxTimestampJump)
                    timeline.begin(at: anchor)
                    try play(
                        from: first, timeline: timeline, reader: &reader, presenters: presenters, timing: timing,
                        shownSize: &shownSize, leadsClock: leadsClock)
                }
            } catch is Superseded {
                reader.catchUp()
                continue
            }
            switch control.arriveAtEnd(serial: segment.serial) {
            case .passed: return
            case .stopping: throw Stopped()
            case .superseded: reader.catchUp()
            }
        }
    }

    /// Presents a segment from its first frame to its end; throws `Superseded` when a seek interrupts it.
    /// The first frame is shown at once when paused (a seek while paused shows where it landed). Each frame is due
    /// where `timeline` places it: at its timestamp, except after a timestamp discontinuity (PresentationTimeline).
    private func play(
        from first: Frame, timeline: PresentationTimeline, reader: inout SegmentReader,
        presenters: [any VideoPresenter], timing: StreamTiming, shownSize: inout DisplaySize?, leadsClock: Bool
    ) throws {
        let serial = reader.segment.serial
        var timeline = timeline
        var frame = first
        var placement = timeline.place(stamp: timing.seconds(of: first), duration: timing.duration(of: first))
        var showNow = control.status(of: serial) == .paused
        var first = true
        let mayDrop: Bool
        switch configuration.video {
        case .window, .fullscreen, .hosted: mayDrop = true
        case .none, .framemd5: mayDrop = false
        }
        while true {
            let (due, length) = (placement.time, placement.duration)
            if !showNow { try waitUntilDue(due, serial: serial) }
            showNow = false
            if mayDrop,
                LateFrameRule.drops(
                    firstOfSegment: first, duration: length, nextDue: clock.dueTime(of: due + length),
                    now: Monotonic.now(), nextAtHand: reader.hasNextAtHand)
            {
                countDroppedFrame()
            } else {
                try burnSubtitles(into: frame, timing: timing)
                // A seek while this frame waited or had its subtitles drawn makes it one of the old position's: not
                // shown. (One already being presented when a seek comes is finished, as in ffplay.)
                if control.status(of: serial) == .superseded { throw Superseded() }
                for presenter in presenters { try presenter.present(frame) }
                let size = DisplaySize(of: frame.pointer.pointee)
                // The first size was announced from the stream's parameters when it opened.
                if let shown = shownSize, shown != size, size.width > 0 {
                    emit(.naturalSize(width: size.width, height: size.height))
                }
                shownSize = size
                let presented = Monotonic.now()
                timingLog?.video(pts: timing.seconds(of: frame) ?? due, at: presented)
                videoBecameActive()
                if leadsClock { clock.follow(due, at: presented, tolerance: Self.videoLeadLateness * clock.rate) }
            }
            first = false
            guard let item = reader.next() else { throw Stopped() }
            switch item {
            case .superseded: throw Superseded()
            case .end:
                // A still picture stays until playback is stopped (or a seek shows it again).
                if configuration.still { try holdUntilStopped(serial: serial) }
                // Hold the last frame for its duration, so video-only media play for their whole length.
                try waitUntilDue(due + length, serial: serial)
                return
            case .item(let next):
                frame = next
                placement = timeline.place(stamp: timing.seconds(of: next), duration: timing.duration(of: next))
            }
        }
    }

    /// The presenters that `configuration.video` asks for (none for `.none`: frames are only timed).
    /// `caption`: lines shown under the picture in a window (a song's title and artist under its cover art).
    private func makePresenters(timing: StreamTiming, streamName: String, caption: [String]) throws
        -> [any VideoPresenter]
    {
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
            return [
                try WindowPresenter(
                    mode: .windowed, scaling: configuration.scalingMode, streamName: streamName, caption: caption,
                    log: configuration.log)
            ]
        case .fullscreen:
            return [
                try WindowPresenter(
                    mode: .fullscreen, scaling: configuration.scalingMode, streamName: streamName, caption: caption,
                    log: configuration.log)
            ]
        case .hosted(let view):
            return [
                try WindowPresenter(
                    mode: .hosted(view), scaling: configuration.scalingMode, streamName: streamName, caption: caption,
                    log: configuration.log)
            ]
        }
    }

    /// Keeps the picture on screen until playback is stopped (throws `Stopped`) or a seek begins a newer segment than
    /// `serial` (throws `Superseded`); pausing changes nothing.
    private func holdUntilStopped(serial: Int) throws {
        while true {
            switch control.waitWhileShowing(serial: serial) {
            case .stopping: throw Stopped()
            case .superseded: throw Superseded()
            case .playing, .paused: continue
            }
        }
    }

    /// Waits until media time `media` is due on the clock; throws `Stopped` when playback is being stopped and
    /// `Superseded` when a seek began a newer segment than `serial`.
    private func waitUntilDue(_ media: Double, serial: Int) throws {
        while true {
            switch control.status(of: serial) {
            case .stopping: throw Stopped()
            case .superseded: throw Superseded()
            case .paused: _ = control.waitWhilePaused(serial: serial)
            case .playing:
                if control.sleep(untilDue: media, on: clock) { return }
            }
        }
    }
}

/// A picture's size as it is displayed: its width stretched by the sample aspect ratio.
struct DisplaySize: Equatable {
    var width: Int
    var height: Int

    init(of frame: AVFrame) {
        let sar = frame.sample_aspect_ratio
        width = sar.num > 0 && sar.den > 0 ? Int((Double(frame.width) * av_q2d(sar)).rounded()) : Int(frame.width)
        height = Int(frame.height)
    }
}
