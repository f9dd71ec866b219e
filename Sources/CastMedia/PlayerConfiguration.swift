public import CastProtocol
public import Foundation

/// Where the engine sends audio.
public enum AudioOutput: Sendable, Equatable {
    /// Audio is decoded and timed but not played.
    case none
    /// An ALSA PCM by name (`default`, `hw:0`, `null`, a PCM of the ALSA configuration).
    case alsa(device: String)
}

/// Who paces the audio: the sound card, or the engine's clock (docs/design.md, decision 6; docs/multiroom.md, "A
/// sound card that paces itself").
public enum AudioClock: String, Sendable, Equatable, CaseIterable {
    /// By the PCM: one that ends in ALSA's `null` (`null` itself, the `file` plugin over it, as the lab's captures)
    /// takes what it is given, and the engine paces it; any other (a card, a plugin over one, a sound server) paces
    /// itself.
    case auto
    /// The device paces itself: the engine writes up to its buffer ahead, its blocking writes set the pace, and the
    /// clock follows it (played = written − delay). In a group its drift from the group's timeline is corrected by
    /// resampling (`DriftCompensation`).
    case device
    /// The engine paces the writes by its clock, one device buffer ahead; in a group the clock's trim keeps it in step.
    case engine
}

/// Where the engine presents video.
public enum VideoOutput: Sendable, Equatable {
    /// Video is decoded and timed but not shown.
    case none
    /// One line per presented frame, in the format of `ffmpeg -f framemd5`, written at the frame's display time.
    case framemd5(path: String)
    /// A window at the video's natural size (1280×720 while idle), through SDL2 (X11, Wayland or KMS/DRM).
    case window
    /// The whole display (SDL2's desktop full screen); pictures are fitted by the scaling mode.
    case fullscreen
    /// A window another program owns (its X11 window id), drawn into as it is: fitted by the scaling mode, the rest
    /// painted in the background colour. The program keeps the window's size, place and visibility.
    case hosted(HostedVideo)
}

/// Video drawn into a window the application owns: the counterpart of adding the seeds' `MPMoviePlayerController.view`
/// to one's own view hierarchy.
public struct HostedVideo: Sendable, Equatable {
    /// The X11 window (XID) to draw into: the application's window or a child window it made for the movie, from its
    /// toolkit (SDL_GetWindowWMInfo's `info.x11.window`, GTK's gdk_x11_window_get_xid, Qt's winId()).
    public var x11Window: UInt
    /// The colour where the picture does not cover the window (the seeds' `backgroundView.backgroundColor`).
    public var background: VideoColor

    /// Draws into `x11Window`, with `background` around the picture.
    public init(x11Window: UInt, background: VideoColor = .black) {
        self.x11Window = x11Window
        self.background = background
    }
}

/// An opaque colour, 8 bits a component.
public struct VideoColor: Sendable, Equatable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    /// A colour from its components.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let black = VideoColor(red: 0, green: 0, blue: 0)
}

/// How a `Player` plays.
public struct PlayerConfiguration: Sendable {
    /// The audio output.
    public var audio: AudioOutput
    /// The video output.
    public var video: VideoOutput
    /// The channels (1...8) the ALSA device is opened with; every source is downmixed or upmixed to them with the
    /// standard matrix (`ffmpeg -ac N`) and written in the device's channel order. 2 (stereo) by default: ALSA's own
    /// conversion would keep only the first channels of a wider source, and lose the centre where dialogue is.
    public var audioChannels = 2
    /// Who paces the audio device (`AudioClock`): by the PCM unless told.
    public var audioClock: AudioClock = .auto
    /// The language of the audio track to play (ISO 639-2 "fra" or 639-1 "fr"), when the media has several; nil, or a
    /// language no track has: the track FFmpeg picks (the default one).
    public var audioLanguage: String?
    /// The language of the subtitle track to show (ISO 639, as `audioLanguage`), or "off" for none; nil, or a language
    /// no track has: the track marked forced or default, if any (as mpv). See `Demuxer.subtitleStream(language:)`.
    public var subtitleLanguage: String?
    /// A sidecar subtitle file's bytes (SRT, ASS/SSA, WebVTT, …: whatever FFmpeg reads), shown instead of the media's
    /// own tracks; at most `SubtitleFile.maximumSize` bytes are looked at. A file that cannot be read is reported and
    /// the media plays without subtitles.
    public var subtitleFile: [UInt8]?
    /// Where playback begins, in seconds from the start of the media.
    public var startTime: Double = 0
    /// How `.window` and `.fullscreen` fit pictures whose shape differs from the screen's; see `Player.setScalingMode`.
    public var scalingMode: ScalingMode = .aspectFit
    /// MPMoviePlayerController.shouldAutoplay: true (the default) plays as soon as the first frames are ready;
    /// false loads, shows the first frame and reports `paused` (never `playing`) until `Player.resume()`.
    public var autoplay = true
    /// The input is one still picture (an AirPlay client's photo): it is opened only as a JPEG or PNG
    /// (`URLInput.pictureFormatWhitelist`), and its picture stays on screen until `Player.stop()`, where a video's
    /// last frame would end playback (`playbackEnded`) after its duration.
    public var still = false
    /// When playback was asked for (the receiver's play request), for the access log's start date and start-up
    /// time; nil: when `Player.start()` is called.
    public var requestDate: Date?
    /// A file that receives one line per presented video frame and per audio period written, stamped with the
    /// monotonic clock (see `TimingLog`), so that A/V sync can be measured from outside; nil for none.
    public var timingLog: String?
    /// Where the engine's remarks go (a subtitle track it cannot show, a window call that failed); silent by default,
    /// so that a program using the engine prints nothing it did not ask for.
    public var log = MediaLog.silent

    /// A configuration with the given outputs, starting at `startTime` seconds.
    public init(
        audio: AudioOutput, video: VideoOutput, startTime: Double = 0, scalingMode: ScalingMode = .aspectFit,
        autoplay: Bool = true, timingLog: String? = nil
    ) {
        self.audio = audio
        self.video = video
        self.startTime = startTime
        self.scalingMode = scalingMode
        self.autoplay = autoplay
        self.timingLog = timingLog
    }
}
