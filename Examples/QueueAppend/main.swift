// queue-append: the seeds' listing 2-5, as written in Swift. It plays the first song of a folder, and a moment later
// adds the rest of the folder to the queue while keeping the song and the time it is at: it saves `nowPlayingItem`
// and `currentPlaybackTime`, sets the longer queue, and sets both back. None of it is heard.
//
//     swift run queue-append ~/Music
import CastKit
import Foundation
import Synchronization

let arguments = Array(CommandLine.arguments.dropFirst())
guard let folder = arguments.first else {
    FileHandle.standardError.write(Data("usage: queue-append FOLDER\n".utf8))
    exit(2)
}
let musicPlayer = MusicPlayerController.applicationMusicPlayer
let userMediaItemCollection = MediaQuery(folder: URL(fileURLWithPath: folder)).items
guard userMediaItemCollection.count >= 2 else {
    print("queue-append needs two songs or more in \(folder)")
    exit(1)
}
musicPlayer.setQueue(with: Array(userMediaItemCollection.prefix(1)))
musicPlayer.play()
Thread.sleep(forTimeInterval: 1.5)

let heard = Mutex<[String]>([])
musicPlayer.beginGeneratingPlaybackNotifications()
let observers = [
    Notification.Name.musicPlayerControllerNowPlayingItemDidChange, .musicPlayerControllerPlaybackStateDidChange,
]
.map { name in
    NotificationCenter.default.addObserver(forName: name, object: musicPlayer, queue: nil) { note in
        heard.withLock { $0.append(note.name.rawValue) }
    }
}

// Listing 2-5: adding to the queue while it plays.
let nowPlayingItem = musicPlayer.nowPlayingItem
let currentPlaybackTime = musicPlayer.currentPlaybackTime
var newQueue = Array(userMediaItemCollection.prefix(1))
newQueue.append(contentsOf: userMediaItemCollection.dropFirst())
musicPlayer.setQueue(with: newQueue)
musicPlayer.nowPlayingItem = nowPlayingItem
musicPlayer.currentPlaybackTime = currentPlaybackTime

Thread.sleep(forTimeInterval: 0.5)
print(String(format: "saved: %@ at %.2f s", nowPlayingItem?.title ?? "-", currentPlaybackTime))
print(
    String(
        format: "now: %@ at %.2f s, %@, %d in the queue", musicPlayer.nowPlayingItem?.title ?? "-",
        musicPlayer.currentPlaybackTime, "\(musicPlayer.playbackState)", musicPlayer.items.count))
let names = heard.withLock { $0 }
print("notifications: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
for observer in observers { NotificationCenter.default.removeObserver(observer) }
musicPlayer.stop()
