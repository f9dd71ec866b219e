internal import CFFmpeg
import Foundation

/// What a media file says about itself, read with libavformat without decoding: its tags (title, artist, album,
/// …), duration, the kinds of streams it holds, and its artwork (an attached picture, as MP3, M4A and FLAC carry).
///
/// Bounded: at most `maximumTags` tags of at most `maximumValueLength` bytes each (longer values are cut), artwork of
/// at most `maximumArtworkSize` bytes (larger artwork is left out). Reading blocks while FFmpeg probes the file.
public struct MediaMetadata: Sendable, Equatable {
    /// Container and stream tags, lowercase keys (`title`, `artist`, `album`, `album_artist`, `genre`, `date`,
    /// `track`, …); the container's tags win over a stream's.
    public var tags: [String: String]
    /// Seconds, when the file knows.
    public var duration: Double?
    /// Whether it holds audio.
    public var hasAudio: Bool
    /// Whether it holds video other than artwork.
    public var hasVideo: Bool
    /// The attached picture's bytes (JPEG or PNG, as stored), when there is one.
    public var artwork: [UInt8]?

    /// The most tags kept.
    public static let maximumTags = 64
    /// The longest tag value kept, in bytes.
    public static let maximumValueLength = 1024
    /// The largest artwork kept, in bytes.
    public static let maximumArtworkSize = 8 << 20

    /// Reads the file at `path`.
    /// - Throws: `MediaError` when FFmpeg cannot open or probe it.
    public static func read(path: String) throws -> MediaMetadata {
        FFmpegLog.install()
        var context: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&context, path, nil, nil)
        guard opened >= 0, context != nil else { throw MediaError.ffmpeg("avformat_open_input", status: opened) }
        defer { avformat_close_input(&context) }
        guard let format = context else { throw MediaError.ffmpeg("avformat_open_input", status: opened) }
        let probed = avformat_find_stream_info(format, nil)
        guard probed >= 0 else { throw MediaError.ffmpeg("avformat_find_stream_info", status: probed) }

        var metadata = MediaMetadata(tags: [:], duration: nil, hasAudio: false, hasVideo: false, artwork: nil)
        if format.pointee.duration > 0 && format.pointee.duration != cast_av_nopts_value() {
            metadata.duration = Double(format.pointee.duration) / Double(AV_TIME_BASE)
        }
        var streamTags: [String: String] = [:]
        for index in 0..<Int(format.pointee.nb_streams) {
            guard let stream = format.pointee.streams[index] else { continue }
            let type = stream.pointee.codecpar.pointee.codec_type
            if type == AVMEDIA_TYPE_AUDIO { metadata.hasAudio = true }
            if type == AVMEDIA_TYPE_VIDEO {
                if stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 {
                    let packet = stream.pointee.attached_pic
                    if metadata.artwork == nil, let data = packet.data, packet.size > 0,
                        Int(packet.size) <= maximumArtworkSize
                    {
                        metadata.artwork = Array(UnsafeBufferPointer(start: data, count: Int(packet.size)))
                    }
                } else {
                    metadata.hasVideo = true
                }
            }
            merge(stream.pointee.metadata, into: &streamTags)
        }
        merge(format.pointee.metadata, into: &metadata.tags)
        for (key, value) in streamTags where metadata.tags[key] == nil && metadata.tags.count < maximumTags {
            metadata.tags[key] = value
        }
        return metadata
    }

    /// Adds an AVDictionary's entries, bounded.
    private static func merge(_ dictionary: OpaquePointer?, into tags: inout [String: String]) {
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while tags.count < maximumTags, let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            guard let key = next.pointee.key, let value = next.pointee.value else { continue }
            let name = String(cString: key).lowercased()
            guard tags[name] == nil else { continue }
            var text = String(cString: value)
            if text.utf8.count > maximumValueLength {
                text = String(decoding: text.utf8.prefix(maximumValueLength), as: UTF8.self)
            }
            tags[name] = text
        }
    }
}
