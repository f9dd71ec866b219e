internal import CFFmpeg

/// libavfilter, opened the first time a graph is made (CFFmpeg's avfilter.h says why it is not linked: about 3.4 MB of
/// relocated data in every process that maps it and its dependencies, for films that almost never need a filter).
enum FilterLibrary {
    /// Opens libavfilter if it is not open yet; throws with the loader's words when it cannot be.
    static func load() throws {
        try load(soname: nil)
    }

    /// `load()` with the library named (nil: the one the headers are from), so that a test can ask for one that does
    /// not exist.
    static func load(soname: String?) throws {
        var error = [CChar](repeating: 0, count: 512)
        let loaded =
            if let soname {
                cast_avfilter_load_named(soname, &error, error.count)
            } else {
                cast_avfilter_load(&error, error.count)
            }
        guard loaded else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MediaError.other("libavfilter could not be loaded (\(reason)): this picture or tempo needs a filter")
        }
    }

    /// Whether this process has opened libavfilter (nothing is opened by asking).
    static var isLoaded: Bool { cast_avfilter_is_loaded() }
}
