public import CastProtocol

extension Player: PlaybackDriver {
    /// Carries out a control action of the wire's vocabulary (`PlaybackDriver`): each maps to one of the player's
    /// methods; `accessLog` emits the entry as an event, after the events before it.
    public func perform(_ action: CastProtocol.PlaybackControl.Action) {
        switch action {
        case .pause: pause()
        case .resume: resume()
        case .resumeAt(let instant): resume(at: UInt64(max(instant, 0)))
        case .align(let elapsed, let instant): align(elapsed: elapsed, at: UInt64(max(instant, 0)))
        case .anchor: anchor()
        case .stop: stop()
        case .seek(let position, let exact): seek(to: position, exact: exact)
        case .volume(let volume): setVolume(volume)
        case .mute(let muted): setMuted(muted)
        case .rate(let rate): setRate(rate)
        case .scaling(let mode): setScalingMode(mode)
        case .accessLog: emit(.accessLog(accessLog()))
        case .subtitles(let language): selectSubtitles(language)
        case .audio(let language): selectAudio(language)
        case .join, .skip, .move: break  // for the sender that plays a group or a queue (castd passes it on)
        }
    }
}
