// music-queue: plays the music in a folder as a queue, like the seeds' application music player.
//
//     swift run music-queue ~/Music                       # album order
//     swift run music-queue ~/Music --shuffle --repeat     # shuffled, for ever
//     swift run music-queue ~/Music --to kitchen           # on a receiver, or an AirPlay speaker
//     swift run music-queue ~/Music --to kitchen --to study   # on a group: both in step
import CastKit
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard let folder = arguments.first else {
    FileHandle.standardError.write(
        Data("usage: music-queue FOLDER [--shuffle] [--repeat] [--to RECEIVER]...\n".utf8))
    exit(2)
}
let player = MusicPlayerController.applicationMusicPlayer
let items = MediaQuery(folder: URL(fileURLWithPath: folder)).items
guard !items.isEmpty else {
    print("no music in \(folder)")
    exit(1)
}
if arguments.contains("--shuffle") { player.shuffleMode = .songs }
if arguments.contains("--repeat") { player.repeatMode = .all }
// Every `--to` is a receiver of the route: one plays alone, several play as a group, in step.
var selection: [ReceiverDescription] = []
for (index, argument) in arguments.enumerated() where argument == "--to" && arguments.indices.contains(index + 1) {
    do {
        selection.append(try ReceiverBrowser.resolve(arguments[index + 1], includingSpeakers: true))
    } catch {
        print("cannot use \(arguments[index + 1]): \(error.message)")
    }
}
if selection.isEmpty && arguments.contains("--to") { print("playing here") }
CastRoute.selection = selection

let done = DispatchSemaphore(value: 0)
player.beginGeneratingPlaybackNotifications()
let observer = NotificationCenter.default.addObserver(
    forName: .musicPlayerControllerNowPlayingItemDidChange, object: player, queue: nil
) { _ in
    guard let item = player.nowPlayingItem else {
        done.signal()
        return
    }
    print(
        "now playing: \(item.title)\(item.artist.map { " by \($0)" } ?? "")\(item.albumTitle.map { " (\($0))" } ?? "")")
}
player.setQueue(with: items)  // posts the first now playing item
player.play()
done.wait()
NotificationCenter.default.removeObserver(observer)
player.endGeneratingPlaybackNotifications()
