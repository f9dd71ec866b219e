public import CastMedia
import Foundation

extension MoviePlayerController {
    /// Where a movie player plays when it plays locally (no route selected, or `allowsAirPlay` false).
    public struct Outputs: Sendable, Equatable {
        /// Where local video goes.
        public enum Video: Sendable, Equatable {
            /// Decoded and timed, not shown.
            case none
            /// A window at the movie's natural size (SDL2).
            case window
            /// The whole display.
            case fullscreen
            /// One line per presented frame in the format of `ffmpeg -f framemd5` (for tests).
            case framemd5(path: String)
            /// The application's own X11 window (what `MoviePlayerController.view` sets up).
            case hosted(HostedVideo)
        }

        /// The ALSA PCM that plays the sound; nil decodes and times it without playing it.
        public var audioDevice: String?
        /// Where video goes.
        public var video: Video

        /// Outputs; by default ALSA's `default` PCM, and a window when a display is available (else none).
        public init(audioDevice: String? = "default", video: Video = Outputs.defaultVideo) {
            self.audioDevice = audioDevice
            self.video = video
        }

        /// A window when `DISPLAY` or `WAYLAND_DISPLAY` is set, otherwise none.
        public static var defaultVideo: Video {
            let env = ProcessInfo.processInfo.environment
            return env["DISPLAY"] != nil || env["WAYLAND_DISPLAY"] != nil ? .window : .none
        }

        /// The engine's configuration for these outputs, starting at `startTime`.
        func engineConfiguration(startTime: Double) -> PlayerConfiguration {
            let audio: AudioOutput = audioDevice.map { .alsa(device: $0) } ?? .none
            let engineVideo: VideoOutput
            switch video {
            case .none: engineVideo = .none
            case .window: engineVideo = .window
            case .fullscreen: engineVideo = .fullscreen
            case .framemd5(let path): engineVideo = .framemd5(path: path)
            case .hosted(let view): engineVideo = .hosted(view)
            }
            return PlayerConfiguration(audio: audio, video: engineVideo, startTime: max(startTime, 0))
        }
    }
}
