/// One playback, wherever it runs, driven in one vocabulary: the wire's control actions. The engine in this process
/// (`Player`), the engine in a decoder worker (castd's `DecoderProcess`), and what castd's session hands them to all
/// take the same `PlaybackControl.Action`s, so that an action means the same thing everywhere and a new one is added
/// in one place. What an action changes comes back as `PlaybackEvent`s, on the channel the playback was made with.
///
/// Thread-safety: conforming types accept actions from any thread.
public protocol PlaybackDriver: AnyObject, Sendable {
    /// Starts playback (opening the media first).
    func start()
    /// Carries out `action`; never blocks on the media or the network. `stop` ends playback (it finishes with
    /// `userExited`); `accessLog` answers with an `accessLog` event.
    func perform(_ action: PlaybackControl.Action)
}
