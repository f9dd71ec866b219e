import CastBase
import CastMedia
public import CastProtocol
public import Foundation

extension MoviePlayerController {
    /// How the movie repeats (MPMovieRepeatMode).
    public enum RepeatMode: Sendable {
        /// It plays once.
        case none
        /// It starts again from `initialPlaybackTime` each time it ends (or reaches `endPlaybackTime`), without a
        /// finish notification, until stopped.
        case one
    }

    /// The controls a player would draw (MPMovieControlStyle). CastKit draws no controls of its own: the style is
    /// kept for the program that draws them.
    public enum ControlStyle: Sendable {
        /// No controls.
        case none
        /// Controls for a movie in the application's view.
        case embedded
        /// Controls for a movie that fills the screen.
        case fullscreen

        /// The seeds' default style: the full-screen controls (a player's `controlStyle` starts as this).
        public static let `default` = ControlStyle.fullscreen
    }

    /// Where the movie comes from (MPMovieSourceType).
    public enum SourceType: Sendable {
        case unknown
        /// A file, or a URL of a whole file.
        case file
        /// A stream over http(s).
        case streaming
    }

    /// The userInfo key of a full-screen notification's animation duration (a `TimeInterval`).
    public static let fullscreenAnimationDurationUserInfoKey = "MoviePlayerFullscreenAnimationDurationUserInfoKey"
    /// The userInfo key of a full-screen notification's animation curve (a `String`: "easeInOut" or "linear").
    public static let fullscreenAnimationCurveUserInfoKey = "MoviePlayerFullscreenAnimationCurveUserInfoKey"

    // MARK: Presentation

    /// How pictures fit the screen when they play here: `.aspectFit` (default), `.aspectFill`, `.fill` or `.none`.
    /// Applied at once to a movie playing in a window; a receiver fits pictures by its own setting.
    public var scalingMode: ScalingMode {
        get { state.withLock { $0.scalingMode } }
        set {
            state.withLock { state in
                guard state.scalingMode != newValue else { return }
                state.scalingMode = newValue
                state.playback?.perform(.scaling(newValue))
                announce(.scalingModeDidChange(newValue), in: state)
            }
        }
    }

    /// The subtitles shown, here or on a receiver: a language (ISO 639, "fra" or "fr") picks that track, "off" shows
    /// none; nil (the default) shows the track the movie marks forced or default. Setting a language or "off" applies
    /// at once to the movie playing (the receiver seeks to where it is, to read the new track's lines again) and to
    /// the next ones; setting nil changes nothing until the next movie. A language no track has keeps what shows.
    public var subtitleLanguage: String? {
        get { state.withLock { $0.subtitleLanguage } }
        set {
            state.withLock { state in
                if let language = Self.choose(newValue, keptIn: &state.subtitleLanguage, allowsOff: true) {
                    state.playback?.perform(.subtitles(language))
                }
            }
        }
    }

    /// The audio track played, here or on a receiver: a language (ISO 639, "fra" or "fr") picks that track; nil (the
    /// default) plays the movie's default track. Setting a language applies at once to the movie playing (playback
    /// seeks to where it is and goes on in that language) and to the next ones; nil changes nothing until the next
    /// movie. A language no track has keeps what plays. `tracks` lists the languages.
    public var audioLanguage: String? {
        get { state.withLock { $0.audioLanguage } }
        set {
            state.withLock { state in
                if let language = Self.choose(newValue, keptIn: &state.audioLanguage, allowsOff: false) {
                    state.playback?.perform(.audio(language))
                }
            }
        }
    }

    /// Keeps a track choice in `kept`; returns the language to apply to the movie playing when the choice changed and
    /// is one the engine takes: a language code, or "off" where `allowsOff`.
    private static func choose(_ value: String?, keptIn kept: inout String?, allowsOff: Bool) -> String? {
        let language = value?.lowercased()
        guard kept != language else { return nil }
        kept = language
        guard let language, isTrackChoice(language, allowsOff: allowsOff) else { return nil }
        return language
    }

    /// Whether `language` is a choice a track control takes.
    static func isTrackChoice(_ language: String, allowsOff: Bool) -> Bool {
        (allowsOff && language == "off") || PlayRequest.isLanguageCode(language)
    }

    /// The controls a program would draw; default `.default` (which is `.fullscreen`, as in the seeds). Kept, not
    /// drawn.
    public var controlStyle: ControlStyle {
        get { state.withLock { $0.controlStyle } }
        set { state.withLock { $0.controlStyle = newValue } }
    }

    /// Whether local video fills the display (`setFullscreen(_:animated:)`). Default false.
    public var isFullscreen: Bool {
        get { state.withLock { $0.isFullscreen } }
        set { setFullscreen(newValue, animated: false) }
    }

    /// Goes to or leaves full screen. Posts `.moviePlayerWillEnterFullscreen`/`...DidEnterFullscreen` (or the exit
    /// pair) with the animation keys (duration 0.3 s when animated, else 0; curve "easeInOut"). A movie playing in a
    /// window here moves to the full display (or back) at its position, like a route move; one playing on a receiver
    /// or with no window output only changes the property.
    public func setFullscreen(_ fullscreen: Bool, animated: Bool) {
        state.withLock { state in
            guard state.isFullscreen != fullscreen else { return }
            let info = FullscreenAnimation(duration: animated ? 0.3 : 0, curve: "easeInOut")
            announce(fullscreen ? .willEnterFullscreen(info) : .willExitFullscreen(info), in: state)
            state.isFullscreen = fullscreen
            if state.playback != nil && state.playback?.route == nil && localOutputs(in: state).showsPictures {
                restartHere(in: &state)
            }
            announce(fullscreen ? .didEnterFullscreen(info) : .didExitFullscreen(info), in: state)
        }
    }

    /// The outputs local playback uses now: the window becomes the full display while `isFullscreen`; otherwise
    /// pictures go into the application's window when `view` has one (instead of CastKit's window, or none;
    /// framemd5, a test output, stays).
    func localOutputs(in state: State) -> Outputs {
        var local = outputs
        let hostWindow = view.x11Window
        switch outputs.video {
        case .window, .none, .hosted:
            if state.isFullscreen && (outputs.video == .window || hostWindow != nil) {
                local.video = .fullscreen
            } else if let hostWindow {
                let background = backgroundView.backgroundColor ?? view.backgroundColor
                local.video = .hosted(HostedVideo(x11Window: hostWindow, background: background))
            }
        case .fullscreen, .framemd5:
            break
        }
        return local
    }

    /// `view` or `backgroundView` changed: a movie playing here moves to where its pictures now go, at its position.
    func viewChanged() {
        state.withLock { state in
            guard let playback = state.playback, playback.route == nil else { return }
            guard localOutputs(in: state) != state.shownOutputs else { return }
            restartHere(in: &state)
        }
    }

    // MARK: Repeat and source

    /// Whether the movie starts again when it ends. Default `.none`.
    public var repeatMode: RepeatMode {
        get { state.withLock { $0.repeatMode } }
        set { state.withLock { $0.repeatMode = newValue } }
    }

    /// Where the movie comes from: detected when it loads (`.file` for a file URL, `.streaming` for http(s)) unless
    /// set beforehand, as the seeds allow, to say so. Default `.unknown`.
    public var movieSourceType: SourceType {
        get { state.withLock { $0.movieSourceType } }
        set {
            state.withLock { state in
                state.movieSourceType = newValue
                state.sourceTypeGiven = newValue != .unknown
            }
        }
    }

    /// How much of the movie can play without waiting, in seconds from its start: what the engine (here or on the
    /// receiver) reports buffered, else the whole of a file, else what has played of a stream.
    public var playableDuration: TimeInterval {
        state.withLock { state in
            if let buffered = state.movie.bufferedUpTo { return buffered }
            return state.movieSourceType == .streaming ? state.currentTime : state.movie.duration
        }
    }

    // MARK: Scrubbing

    /// Scrubs forward: `playbackState` becomes `.seekingForward` and the position moves 2 s ahead every quarter
    /// second (the picture follows, the sound is silent) until `endSeeking()`.
    public func beginSeekingForward() { beginSeeking(forward: true) }

    /// Scrubs backward, as `beginSeekingForward()` does forward.
    public func beginSeekingBackward() { beginSeeking(forward: false) }

    /// Ends a scrub where it got to; the movie plays again if it was playing.
    public func endSeeking() {
        state.withLock { state in
            guard let seeking = state.seeking else { return }
            seeking.timer.cancel()
            state.seeking = nil
            guard let playback = state.playback else { return }
            if seeking.resumePlaying {
                state.intent = .playing
                playback.perform(.resume)
                setPlaybackState(.playing, in: &state)
            } else {
                setPlaybackState(.paused, in: &state)
            }
        }
    }

    private func beginSeeking(forward: Bool) {
        state.withLock { state in
            guard let playback = state.playback else { return }
            if let seeking = state.seeking {
                seeking.timer.cancel()
                state.seeking = nil
            }
            let resume = state.intent == .playing
            state.intent = .paused
            state.position.rebase(running: false)
            playback.perform(.pause)
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
            timer.setEventHandler { [weak self] in self?.scrubStep() }
            state.seeking = Seeking(forward: forward, resumePlaying: resume, timer: timer)
            setPlaybackState(forward ? .seekingForward : .seekingBackward, in: &state)
            timer.resume()
        }
    }

    /// One step of a scrub: 2 s in its direction, within the movie.
    private func scrubStep() {
        state.withLock { state in
            guard let seeking = state.seeking, let playback = state.playback else { return }
            var target = state.currentTime + (seeking.forward ? 2 : -2)
            target = max(0, target)
            if state.movie.duration > 0 { target = min(target, state.movie.duration) }
            state.position = PositionEstimate(seconds: target)
            playback.perform(.seek(position: target, exact: true))
        }
    }

    /// Starts the loaded movie again here at its position, in its state (after the outputs changed).
    private func restartHere(in state: inout State) {
        guard let old = state.playback else { return }
        let seconds = state.currentTime
        old.perform(.stop)
        state.position = PositionEstimate(seconds: seconds)
        state.position.rate = state.rate
        load(from: seconds, playing: state.intent == .playing, in: &state)
    }
}

extension MoviePlayerController.Outputs {
    /// Whether video is shown in a window or on the display.
    var showsPictures: Bool {
        switch video {
        case .window, .fullscreen, .hosted: true
        case .none, .framemd5: false
        }
    }
}
