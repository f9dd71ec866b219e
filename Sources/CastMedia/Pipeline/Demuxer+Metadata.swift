internal import CFFmpeg
import CastProtocol
import Foundation

extension Demuxer {
    /// The container's tags (title, artist, album, comment, ...), the ICY headers and stream title of an http
    /// stream, and whether a stream is an attached picture (cover art); bounded as `TimedMetadata` says.
    var metadata: TimedMetadata {
        var items = Self.tags(context.pointee.metadata)
        items.merge(icyItems()) { old, _ in old }
        var artwork = false
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index] else { continue }
            if stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 { artwork = true }
        }
        return TimedMetadata(items: items, artwork: artwork)
    }

    /// Whether the demuxer reported new tags since the last call (FFmpeg's `AVFMT_EVENT_FLAG_METADATA_UPDATED` on the
    /// container or `AVSTREAM_EVENT_FLAG_METADATA_UPDATED` on a stream: Ogg comments, ID3 in a stream); clears the
    /// flags. `currentMetadata` then says what changed.
    func takeMetadataUpdate() -> Bool {
        var updated = false
        if context.pointee.event_flags & AVFMT_EVENT_FLAG_METADATA_UPDATED != 0 {
            context.pointee.event_flags &= ~AVFMT_EVENT_FLAG_METADATA_UPDATED
            updated = true
        }
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index],
                stream.pointee.event_flags & AVSTREAM_EVENT_FLAG_METADATA_UPDATED != 0
            else { continue }
            stream.pointee.event_flags &= ~AVSTREAM_EVENT_FLAG_METADATA_UPDATED
            updated = true
        }
        return updated
    }

    /// The container's tags merged with the tags of streams that changed while playing (the latter win: they are
    /// the newer, e.g. a radio stream's current title).
    var currentMetadata: TimedMetadata {
        var current = metadata
        var items = current.items
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index],
                stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
            else { continue }
            for (key, value) in Self.tags(stream.pointee.metadata) where Self.timedKeys.contains(key.lowercased()) {
                items[key] = value
            }
        }
        current = TimedMetadata(items: items, artwork: current.artwork)
        return current
    }

    /// Stream tags that carry what plays now (ID3 in a stream); the rest (handler, language) is static.
    private static let timedKeys: Set<String> = ["title", "artist", "album", "comment", "genre", "streamtitle"]

    /// An AVDictionary as a Swift dictionary (at most `TimedMetadata.maximumItems` entries).
    static func tags(_ dictionary: OpaquePointer?) -> [String: String] {
        var items: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while items.count < TimedMetadata.maximumItems,
            let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX)
        {
            entry = next
            guard let key = next.pointee.key, let value = next.pointee.value else { continue }
            items[String(cString: key)] = String(cString: value)
        }
        return items
    }

    /// The ICY (SHOUTcast) metadata of an http stream: `icy-name`, `icy-genre`, ... from the headers and the
    /// current `StreamTitle`, read from FFmpeg's http protocol options as mpv does; empty for anything else.
    func icyItems() -> [String: String] {
        guard isURL, let pb = context.pointee.pb else { return [:] }
        var items: [String: String] = [:]
        for option in ["icy_metadata_headers", "icy_metadata_packet"] {
            var value: UnsafeMutablePointer<UInt8>?
            guard av_opt_get(UnsafeMutableRawPointer(pb), option, AV_OPT_SEARCH_CHILDREN, &value) >= 0, let value
            else { continue }
            defer { av_free(value) }
            let text = String(cString: UnsafeRawPointer(value).assumingMemoryBound(to: CChar.self))
            if option == "icy_metadata_headers" {
                for line in text.split(whereSeparator: \.isNewline) {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    if !key.isEmpty && !value.isEmpty { items[key] = value }
                }
            } else {
                // StreamTitle='Artist - Song';StreamUrl='...';
                for field in text.components(separatedBy: "';") {
                    guard let equals = field.range(of: "='") else { continue }
                    let key = String(field[..<equals.lowerBound])
                    let value = String(field[equals.upperBound...])
                    if !key.isEmpty && !value.isEmpty { items[key] = value }
                }
            }
        }
        return items
    }
}
