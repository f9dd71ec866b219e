/// Where the engine sends audio.
public enum AudioOutput: Sendable, Equatable {
    /// Audio is decoded and timed but not played.
    case none
    /// An ALSA PCM by name (`default`, `hw:0`, `null`, a PCM of the ALSA configuration).
    case alsa(device: String)
}

/// Where the engine presents video.
public enum VideoOutput: Sendable, Equatable {
    /// Video is decoded and timed but not shown.
    case none
    /// One line per presented frame, in the format of `ffmpeg -f framemd5`, written at the frame's display time.
    case framemd5(path: String)
}

/// How a `Player` plays.
public struct PlayerConfiguration: Sendable {
    /// The audio output.
    public var audio: AudioOutput
    /// The video output.
    public var video: VideoOutput
    /// Where playback begins, in seconds from the start of the media.
    public var startTime: Double = 0

    /// A configuration with the given outputs, starting at `startTime` seconds.
    public init(audio: AudioOutput, video: VideoOutput, startTime: Double = 0) {
        self.audio = audio
        self.video = video
        self.startTime = startTime
    }
}
