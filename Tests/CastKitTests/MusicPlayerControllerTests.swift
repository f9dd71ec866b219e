import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// MusicPlayerController playing a queue locally (audio to ALSA's `null`), and the items and queries it plays.
final class MusicPlayerControllerTests: LocalPlaybackTestCase {
    /// Three short tagged tracks of one album, in a folder with a text file and a subfolder.
    private func album(seconds: Double = 1) throws -> [MediaItem] {
        for track in 1...3 {
            _ = try AudioFixtures.tone(
                "0\(track).m4a", seconds: seconds, frequency: 300 + 100 * track,
                tags: ["title": "Song \(track)", "artist": "The Tones", "album": "Sines", "track": "\(track)/3"],
                in: folder)
        }
        try Data("liner notes".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        return MediaQuery(folder: folder).items
    }

    func testItemsAndQueriesReadTheFiles() throws {
        let items = try album()
        XCTAssertEqual(items.map(\.title), ["Song 1", "Song 2", "Song 3"], "album order; the text file is left out")
        XCTAssertEqual(items[0].artist, "The Tones")
        XCTAssertEqual(items[0].albumTitle, "Sines")
        XCTAssertEqual(items[1].albumTrackNumber, 2)
        XCTAssertEqual(items[0].playbackDuration, 1, accuracy: 0.05)
        XCTAssertNil(items[0].artwork)

        let nested = folder.appendingPathComponent("more")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        let covered = try AudioFixtures.tone("cover.mp3", tags: ["artist": "Other"], artwork: true, in: nested)
        let item = try MediaItem(url: covered)
        XCTAssertEqual(item.title, "cover", "no title tag: the file name")
        let artwork = try XCTUnwrap(item.artwork)
        XCTAssertEqual(Array(artwork.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "the PNG that was attached")
        XCTAssertEqual(MediaQuery(folder: folder).items.count, 4, "subfolders are searched")
        XCTAssertEqual(MediaQuery.artist("other", in: folder).items, [item])
        XCTAssertEqual(MediaQuery.album("SINES", in: folder).items.count, 3)
        XCTAssertThrowsError(try MediaItem(url: folder.appendingPathComponent("notes.txt")))
    }

    func testDefaults() {
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        XCTAssertNil(player.nowPlayingItem)
        XCTAssertNil(player.indexOfNowPlayingItem)
        XCTAssertEqual(player.items, [])
        XCTAssertEqual(player.shuffleMode, .off)
        XCTAssertEqual(player.repeatMode, .none)
        XCTAssertEqual(player.playbackState, .stopped)
        XCTAssertEqual(player.currentPlaybackTime, 0)
        XCTAssertEqual(player.volume, 1)
        XCTAssertTrue(player.allowsAirPlay)
        XCTAssertTrue(MusicPlayerController.applicationMusicPlayer === MusicPlayerController.applicationMusicPlayer)
        player.play()  // an empty queue: nothing happens
        XCTAssertEqual(player.playbackState, .stopped)
    }

    /// The queue plays through in order, posting the now playing item and state changes while notifications are
    /// generated, and ends with no now playing item.
    func testPlaysTheQueueThroughWithNotifications() throws {
        let items = try album()
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        let log = NotificationLog(
            object: player,
            names: [
                .musicPlayerControllerNowPlayingItemDidChange, .musicPlayerControllerPlaybackStateDidChange,
                .musicPlayerControllerVolumeDidChange,
            ])
        player.volume = 0.5  // not generating yet: no notification
        player.beginGeneratingPlaybackNotifications()
        // Before the queue is set: its first item is announced too (after `setQueue` returns, on the delivery queue).
        let titles = NowPlayingTitles(player)
        player.setQueue(with: items)
        XCTAssertEqual(player.nowPlayingItem, items[0])
        var played: [String] = []
        player.play()
        XCTAssertTrue(waitUntil(timeout: 15) { player.nowPlayingItem == nil }, "\(titles.seen)")
        played = titles.seen
        XCTAssertEqual(played, ["Song 1", "Song 2", "Song 3"])
        XCTAssertEqual(player.playbackState, .stopped)
        player.volume = 0.8
        player.endGeneratingPlaybackNotifications()
        player.volume = 0.9
        XCTAssertTrue(waitUntil(timeout: 2) { log.count(.musicPlayerControllerVolumeDidChange) == 1 })
        XCTAssertGreaterThanOrEqual(log.count(.musicPlayerControllerNowPlayingItemDidChange), 3)
        XCTAssertGreaterThanOrEqual(log.count(.musicPlayerControllerPlaybackStateDidChange), 2)
        XCTAssertEqual(player.volume, 0.9, accuracy: 0.001)
    }

    /// Scrubbing through a song (the seeds' MPMediaPlayback): forward and back by 2 s a quarter second, the state
    /// `.seekingForward`/`.seekingBackward` while it lasts (with its notification), playing again after.
    func testScrubbingForwardAndBackward() throws {
        _ = try AudioFixtures.tone("long.m4a", seconds: 10, frequency: 440, tags: ["title": "Long"], in: folder)
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        let log = NotificationLog(object: player, names: [.musicPlayerControllerPlaybackStateDidChange])
        player.beginGeneratingPlaybackNotifications()
        player.setQueue(with: MediaQuery(folder: folder).items)
        player.play()
        // `.playing` at once (the queue's state); the song itself once its position moves.
        XCTAssertTrue(waitUntil(timeout: 5) { player.playbackState == .playing })
        XCTAssertTrue(waitUntil(timeout: 5) { player.currentPlaybackTime > 0.1 })
        let before = player.currentPlaybackTime
        player.beginSeekingForward()
        XCTAssertEqual(player.playbackState, .seekingForward)
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertGreaterThanOrEqual(player.currentPlaybackTime, before + 3.5)
        player.endSeeking()
        XCTAssertEqual(player.playbackState, .playing)
        let reached = player.currentPlaybackTime
        player.beginSeekingBackward()
        XCTAssertEqual(player.playbackState, .seekingBackward)
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertLessThanOrEqual(player.currentPlaybackTime, reached - 3)
        player.endSeeking()
        XCTAssertTrue(waitUntil(timeout: 3) { player.playbackState == .playing })
        XCTAssertTrue(waitUntil(timeout: 2) { log.count(.musicPlayerControllerPlaybackStateDidChange) >= 4 })
        player.stop()
    }

    /// Shuffle plays every item once before any again; repeat all wraps (and reshuffles); skipping works at both ends.
    func testShuffleRepeatAndSkipping() throws {
        var items: [MediaItem] = []
        for index in 0..<8 {
            items.append(try MediaItem(url: try AudioFixtures.tone("t\(index).m4a", seconds: 0.5, in: folder)))
        }
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        player.shuffleMode = .songs
        player.setQueue(with: items)
        var round: [MediaItem] = []
        for _ in items {
            round.append(try XCTUnwrap(player.nowPlayingItem))
            player.skipToNextItem()
        }
        XCTAssertEqual(Set(round), Set(items), "a permutation: no repeats until the queue is exhausted")
        XCTAssertEqual(round.count, 8)
        XCTAssertNil(player.nowPlayingItem, "past the end with repeat none: nothing")

        player.repeatMode = .all
        player.setQueue(with: items)
        var twoRounds: [MediaItem] = []
        for _ in 0..<16 {
            twoRounds.append(try XCTUnwrap(player.nowPlayingItem, "repeat all wraps"))
            player.skipToNextItem()
        }
        XCTAssertEqual(Set(twoRounds.prefix(8)), Set(items))
        XCTAssertEqual(Set(twoRounds.suffix(8)), Set(items))

        player.shuffleMode = .off
        player.nowPlayingItem = items[0]
        XCTAssertEqual(player.indexOfNowPlayingItem, 0)
        player.skipToPreviousItem()
        XCTAssertEqual(player.nowPlayingItem, items[7], "before the first with repeat all: the last")
        player.skipToNextItem()
        XCTAssertEqual(player.nowPlayingItem, items[0], "after the last with repeat all: the first")
        player.repeatMode = .none
        player.skipToPreviousItem()
        XCTAssertEqual(player.nowPlayingItem, items[0], "before the first: the first again")
        player.nowPlayingItem = items[7]
        player.skipToNextItem()
        XCTAssertNil(player.nowPlayingItem)

        // Repeat one plays the same item again when it ends by itself.
        player.repeatMode = .one
        player.setQueue(with: Array(items.prefix(2)))
        player.beginGeneratingPlaybackNotifications()
        let titles = NowPlayingTitles(player)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { titles.seen.count >= 2 }, "\(titles.seen)")
        XCTAssertEqual(player.nowPlayingItem, items[0])
        player.stop()
    }

    /// The seeds' listing 2-5: add to the queue while playing, keeping the item and the time.
    func testAddingToTheQueueWhilePlayingKeepsItemAndTime() throws {
        let items = try album(seconds: 3)
        let extra = try MediaItem(url: try AudioFixtures.tone("extra.m4a", seconds: 1, in: folder))
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        player.setQueue(with: Array(items.prefix(2)))
        player.nowPlayingItem = items[1]
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.currentPlaybackTime > 1 })

        // Listing 2-5, as written for the seeds' player. Not heard: item 1 never starts, item 2 is never
        // restarted nor stopped (no now-playing or state notification), it plays on from where it was.
        let log = NotificationLog(
            object: player,
            names: [
                .musicPlayerControllerNowPlayingItemDidChange, .musicPlayerControllerPlaybackStateDidChange,
            ])
        player.beginGeneratingPlaybackNotifications()
        let nowPlayingItem = player.nowPlayingItem
        let currentPlaybackTime = player.currentPlaybackTime
        var queue = player.items
        queue.append(contentsOf: [items[2], extra])
        player.setQueue(with: queue)
        player.nowPlayingItem = nowPlayingItem
        player.currentPlaybackTime = currentPlaybackTime

        XCTAssertEqual(player.nowPlayingItem, items[1])
        XCTAssertEqual(player.items, [items[0], items[1], items[2], extra])
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertGreaterThanOrEqual(player.currentPlaybackTime, currentPlaybackTime + 0.3, "it played on, not again")
        XCTAssertLessThan(player.currentPlaybackTime, currentPlaybackTime + 1.5)
        XCTAssertEqual(log.count(.musicPlayerControllerNowPlayingItemDidChange), 0, "the first item was never loaded")
        XCTAssertEqual(log.count(.musicPlayerControllerPlaybackStateDidChange), 0, "no stop, no restart")
        player.endGeneratingPlaybackNotifications()

        // Setting the queue alone still switches to its first item (after the moment it waits), from its beginning.
        player.setQueue(with: [extra, items[0]])
        XCTAssertEqual(player.nowPlayingItem, extra)
        XCTAssertEqual(player.currentPlaybackTime, 0)
        XCTAssertTrue(
            waitUntil(timeout: 5) { player.playbackState == .playing && player.currentPlaybackTime > 0.1 })
        XCTAssertLessThan(player.currentPlaybackTime, 1)
        player.setQueue(with: queue)
        player.nowPlayingItem = items[1]
        player.currentPlaybackTime = currentPlaybackTime
        // `append` does the same in one call.
        player.append([extra])
        XCTAssertEqual(player.nowPlayingItem, items[1])
        XCTAssertEqual(player.items.count, 5)
        player.skipToBeginning()
        XCTAssertLessThan(player.currentPlaybackTime, 0.5)
        player.stop()
    }

    /// Examples/QueueAppend is the seeds' listing 2-5 as written in Swift: run as a program, the song plays on from
    /// where it was, nothing is posted, and the queue holds the whole folder.
    func testTheListingAsAnExampleProgramIsNotHeard() throws {
        _ = try album(seconds: 4)
        _ = MovieFixtures.alsa  // the program inherits ALSA's configuration: its default PCM is `null`
        let program = Process()
        program.executableURL = MovieFixtures.binaries.appendingPathComponent("queue-append")
        program.arguments = [folder.path]
        let output = Pipe()
        program.standardOutput = output
        try program.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        program.waitUntilExit()
        XCTAssertEqual(program.terminationStatus, 0, text)
        let lines = text.split(separator: "\n").map(String.init)
        print(lines.joined(separator: "\n"))
        let saved = try XCTUnwrap(lines.first { $0.hasPrefix("saved: ") }, text)
        let now = try XCTUnwrap(lines.first { $0.hasPrefix("now: ") }, text)
        XCTAssertTrue(saved.hasPrefix("saved: Song 1 at "), saved)
        XCTAssertTrue(now.hasPrefix("now: Song 1 at "), now)
        XCTAssertTrue(now.hasSuffix(", playing, 3 in the queue"), now)
        func seconds(_ line: String) -> Double {
            Double(line.components(separatedBy: " at ")[1].split(separator: " ")[0]) ?? -1
        }
        XCTAssertGreaterThan(seconds(now), seconds(saved) + 0.3, "it played on from where it was")
        XCTAssertLessThan(seconds(now), seconds(saved) + 1.5)
        XCTAssertTrue(lines.contains("notifications: none"), text)
    }

    /// A movie that starts while the queue is between two items (the first ended, the next not yet started) keeps
    /// playing: the music player's next item waits, interrupted by the movie, and the movie's stop ends that.
    func testAMovieStartedBetweenTwoItemsIsNotStoppedByTheNextItem() throws {
        let items = try album(seconds: 1)
        let movie = MoviePlayerController(
            contentURL: try MovieFixtures.clip(seconds: 4, in: folder), outputs: MovieFixtures.outputs())
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        player.beginGeneratingPlaybackNotifications()
        player.setQueue(with: items)
        // Posted on the engine's delivery queue, in order with its finish: the movie starts after the first item
        // ended (the now playing item is the next one) and before the music player starts that one.
        let started = Flag()
        let token = NotificationCenter.default.addObserver(
            forName: .musicPlayerControllerNowPlayingItemDidChange, object: player, queue: nil
        ) { [weak player] _ in
            guard let player, player.nowPlayingItem == items[1], started.setOnce() else { return }
            movie.play()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.nowPlayingItem == items[1] })
        // The property changes before its notification is delivered (on the engine's queue): wait for the delivery.
        XCTAssertTrue(
            waitUntil(timeout: 5) { started.isSet }, "the first item ended with a change of the now playing item")
        XCTAssertTrue(
            waitUntil(timeout: 5) { player.playbackState == .interrupted }, "\(player.playbackState)")
        XCTAssertTrue(waitUntil(timeout: 5) { movie.playbackState == .playing }, "\(movie.playbackState)")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(movie.playbackState, .playing, "the next item did not take over")
        XCTAssertEqual(player.playbackState, .interrupted)
        XCTAssertLessThan(player.currentPlaybackTime, 0.1, "the next item waits at its beginning")

        movie.stop()
        XCTAssertTrue(waitUntil(timeout: 5) { player.playbackState == .paused }, "\(player.playbackState)")
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.currentPlaybackTime > 0.3 })
        XCTAssertEqual(player.nowPlayingItem, items[1])
        player.stop()
    }
}

/// Titles of the now playing item each time it changes (the notification), in order.
final class NowPlayingTitles: @unchecked Sendable {
    private let lock = NSLock()
    private var titles: [String] = []
    private var token: (any NSObjectProtocol)?

    /// Needs the player to generate notifications.
    init(_ player: MusicPlayerController) {
        if let first = player.nowPlayingItem { titles.append(first.title) }
        token = NotificationCenter.default.addObserver(
            forName: .musicPlayerControllerNowPlayingItemDidChange, object: player, queue: nil
        ) { [weak self, weak player] _ in
            guard let self, let item = player?.nowPlayingItem else { return }
            lock.withLock { titles.append(item.title) }
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    var seen: [String] { lock.withLock { titles } }
}

/// Counts notifications of some names from one object.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Notification.Name: Int] = [:]
    private var tokens: [any NSObjectProtocol] = []

    init(object: AnyObject, names: [Notification.Name]) {
        for name in names {
            tokens.append(
                NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
                    self?.lock.withLock { self?.counts[note.name, default: 0] += 1 }
                })
        }
    }

    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }

    func count(_ name: Notification.Name) -> Int { lock.withLock { counts[name] ?? 0 } }
}
