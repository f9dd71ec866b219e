// movie-player: plays a movie here and, with --to, moves it to a receiver and back by toggling a property.
//
//     swift run movie-player movie.mp4                      # plays here (ALSA and a window)
//     swift run movie-player movie.mp4 --to "Living Room"   # here, then on the receiver, then here again
//     swift run movie-player movie.mp4 --in-window 0x1a00003 --background 203040 --scaling aspectFit
//                                                           # inside another program's X11 window (the seeds' view)
import CastKit
import Foundation

/// Prints a line at once, also into a pipe: whoever reads the events sees each as it happens.
func say(_ items: Any...) {
    FileHandle.standardOutput.write(Data((items.map { "\($0)" }.joined(separator: " ") + "\n").utf8))
}
let arguments = Array(CommandLine.arguments.dropFirst())
guard let path = arguments.first else {
    FileHandle.standardError.write(
        Data("usage: movie-player FILE [--to RECEIVER] [--in-window XID [--background RRGGBB] [--scaling MODE]]\n".utf8)
    )
    exit(2)
}
func value(_ flag: String) -> String? {
    arguments.firstIndex(of: flag).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let receiverName = value("--to")

let player = MoviePlayerController(contentURL: URL(fileURLWithPath: path))
// The movie in an application's window: as an iOS program adds `player.view` to its own view, with a background.
if let window = value("--in-window") {
    guard
        let id = UInt(
            window.hasPrefix("0x") ? String(window.dropFirst(2)) : window, radix: window.hasPrefix("0x") ? 16 : 10)
    else {
        FileHandle.standardError.write(Data("movie-player: --in-window takes an X11 window id\n".utf8))
        exit(2)
    }
    player.view.x11Window = id
    if let hex = value("--background"), hex.count == 6, let rgb = UInt32(hex, radix: 16) {
        player.backgroundView.backgroundColor = VideoColor(
            red: UInt8(rgb >> 16 & 0xFF), green: UInt8(rgb >> 8 & 0xFF), blue: UInt8(rgb & 0xFF))
    }
}
if let mode = value("--scaling") {
    guard let scaling = ScalingMode(rawValue: mode) else {
        FileHandle.standardError.write(Data("movie-player: --scaling takes aspectFit, aspectFill, fill or none\n".utf8))
        exit(2)
    }
    player.scalingMode = scaling
}
let finished = DispatchSemaphore(value: 0)
let observer = NotificationCenter.default.addObserver(
    forName: .moviePlayerPlaybackDidFinish, object: player, queue: nil
) {
    note in
    say("finished:", note.userInfo?[MoviePlayerController.finishReasonUserInfoKey] ?? "?")
    finished.signal()
}
// Detached: top-level code runs on the main actor, and the main thread waits for the finish below.
Task.detached {
    for await event in player.events() { say(event) }
}
player.play()

if let receiverName {
    do {
        Thread.sleep(forTimeInterval: 3)
        // Picking the receiver is the counterpart of picking an AirPlay device: every player follows it.
        CastRoute.selected = try ReceiverBrowser.resolve(receiverName)
        say("on \(receiverName) at \(String(format: "%.1f", player.currentPlaybackTime)) s")
        Thread.sleep(forTimeInterval: 5)
        player.allowsAirPlay = false  // back here, at the same position
        say("back here at \(String(format: "%.1f", player.currentPlaybackTime)) s")
    } catch {
        say("cannot use \(receiverName): \(error.message); playing here")
    }
}
finished.wait()
NotificationCenter.default.removeObserver(observer)
