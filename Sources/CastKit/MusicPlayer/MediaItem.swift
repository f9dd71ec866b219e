import CastMedia
public import Foundation

/// One piece of music (MPMediaItem): a file and what it says about itself, read with libavformat.
public struct MediaItem: Sendable, Hashable, Identifiable {
    /// The file.
    public let url: URL
    /// The title tag, else the file name without its extension.
    public let title: String
    /// The artist tag (or the album artist's), when there is one.
    public let artist: String?
    /// The album tag, when there is one.
    public let albumTitle: String?
    /// The track number within its album, when tagged (`3` or `3/12`).
    public let albumTrackNumber: Int?
    /// Seconds; 0 when the file does not say.
    public let playbackDuration: TimeInterval
    /// The attached picture (JPEG or PNG bytes), when there is one.
    public let artwork: Data?

    /// The file's path: items are the same when their files are.
    public var id: String { url.path }

    /// Reads the item's tags, duration and artwork.
    /// - Throws: `CastError` `.playback` when FFmpeg cannot open the file or it holds no audio.
    public init(url: URL) throws(CastError) {
        let metadata: MediaMetadata
        do {
            metadata = try MediaMetadata.read(path: url.path)
        } catch {
            throw CastError(.playback, "cannot open \(url.path): \(error)")
        }
        guard metadata.hasAudio else { throw CastError(.playback, "\(url.path) holds no audio") }
        self.init(url: url, metadata: metadata)
    }

    init(url: URL, metadata: MediaMetadata) {
        self.url = url
        let tags = metadata.tags
        title = tags["title"].flatMap { $0.isEmpty ? nil : $0 } ?? url.deletingPathExtension().lastPathComponent
        artist = tags["artist"] ?? tags["album_artist"]
        albumTitle = tags["album"]
        albumTrackNumber = tags["track"].flatMap { Int($0.prefix { $0.isNumber }) }
        playbackDuration = metadata.duration ?? 0
        artwork = metadata.artwork.map { Data($0) }
    }

    public static func == (a: MediaItem, b: MediaItem) -> Bool {
        a.url.standardizedFileURL == b.url.standardizedFileURL
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(url.standardizedFileURL.path) }
}

/// The music in a folder (MPMediaQuery over a library that is a folder): every file in it and below that holds
/// audio, in album order (album, then track number, then path), optionally filtered.
public struct MediaQuery: Sendable {
    /// The folder searched.
    public let folder: URL
    /// Keeps an item when it returns true.
    public var filter: @Sendable (MediaItem) -> Bool

    /// The most files looked at; a larger library is cut there (and the rest is left out).
    public static let maximumFiles = 10_000

    /// A query for every piece of music under `folder`.
    public init(folder: URL, filter: @escaping @Sendable (MediaItem) -> Bool = { _ in true }) {
        self.folder = folder
        self.filter = filter
    }

    /// Items by one artist (case-insensitive).
    public static func artist(_ name: String, in folder: URL) -> MediaQuery {
        MediaQuery(folder: folder) { $0.artist?.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Items of one album (case-insensitive).
    public static func album(_ title: String, in folder: URL) -> MediaQuery {
        MediaQuery(folder: folder) { $0.albumTitle?.caseInsensitiveCompare(title) == .orderedSame }
    }

    /// The matching items. Files FFmpeg cannot open, or without audio, are skipped. Blocks while it reads them.
    public var items: [MediaItem] {
        guard
            let walker = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return [] }
        var found: [MediaItem] = []
        var looked = 0
        for case let url as URL in walker {
            guard looked < Self.maximumFiles else { break }
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            looked += 1
            guard let item = try? MediaItem(url: url), filter(item) else { continue }
            found.append(item)
        }
        return found.sorted {
            ($0.albumTitle ?? "", $0.albumTrackNumber ?? Int.max, $0.url.path)
                < ($1.albumTitle ?? "", $1.albumTrackNumber ?? Int.max, $1.url.path)
        }
    }
}
