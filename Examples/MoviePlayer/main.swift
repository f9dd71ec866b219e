// movie-player: plays a movie here and, with --to, moves it to a receiver and back by toggling a property.
//
//     swift run movie-player movie.mp4                      # plays here (ALSA and a window)
//     swift run movie-player movie.mp4 --to "Living Room"   # here, then on the receiver, then here again
import CastKit
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard let path = arguments.first else {
    FileHandle.standardError.write(Data("usage: movie-player FILE [--to RECEIVER]\n".utf8))
    exit(2)
}
let receiverName = arguments.firstIndex(of: "--to").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }

let player = MoviePlayerController(contentURL: URL(fileURLWithPath: path))
let finished = DispatchSemaphore(value: 0)
let observer = NotificationCenter.default.addObserver(forName: .moviePlayerPlaybackDidFinish, object: player, queue: nil) {
    note in
    print("finished:", note.userInfo?[MoviePlayerController.finishReasonUserInfoKey] ?? "?")
    finished.signal()
}
Task {
    for await event in player.events() { print(event) }
}
player.play()

if let receiverName {
    do {
        Thread.sleep(forTimeInterval: 3)
        // Picking the receiver is the counterpart of picking an AirPlay device: every player follows it.
        CastRoute.selected = try ReceiverBrowser.resolve(receiverName)
        print("on \(receiverName) at \(String(format: "%.1f", player.currentPlaybackTime)) s")
        Thread.sleep(forTimeInterval: 5)
        player.allowsAirPlay = false  // back here, at the same position
        print("back here at \(String(format: "%.1f", player.currentPlaybackTime)) s")
    } catch {
        print("cannot use \(receiverName): \(error.message); playing here")
    }
}
finished.wait()
NotificationCenter.default.removeObserver(observer)
