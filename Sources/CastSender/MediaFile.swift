public import CastProtocol
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Media the sender serves to a receiver: a regular file (seekable, known size) or a stream
/// (standard input, a pipe: read in order, size unknown).
///
/// Thread-safety: immutable but for a stream's position, an atomic; reads of a stream come from one serving thread.
public final class MediaFile: Sendable {
    private let fd: Int32
    private let ownsDescriptor: Bool
    /// What the receiver is told about it.
    public let descriptor: MediaDescriptor
    /// The title shown on the receiver: the file name.
    public let title: String
    private let streamPosition = Atomic<Int64>(0)

    private init(fd: Int32, ownsDescriptor: Bool, descriptor: MediaDescriptor, title: String) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.descriptor = descriptor
        self.title = title
    }

    deinit { if ownsDescriptor { close(fd) } }

    /// Opens a file, or standard input for "-". Checked before anything connects.
    /// - Throws: `CastError` `.usage` when the file is missing, unreadable or a directory.
    public static func open(_ path: String) throws(CastError) -> MediaFile {
        if path == "-" { return describe(fd: 0, owns: false, name: "-") }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CastError(.usage, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CastError(.usage, "\(path) is a directory")
        }
        return describe(fd: fd, owns: true, name: path.lastPathComponent)
    }

    /// A stream this process reads from `fd` (a pipe from a helper, such as `cast-mirror`'s screen), which it owns
    /// and closes; the receiver is shown `title`.
    public static func stream(fd: Int32, title: String) -> MediaFile {
        MediaFile(
            fd: fd, ownsDescriptor: true, descriptor: MediaDescriptor(size: nil, seekable: false, nameHint: nil),
            title: title)
    }

    private static func describe(fd: Int32, owns: Bool, name: String) -> MediaFile {
        var info = stat()
        let regular = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        let descriptor = MediaDescriptor(
            size: regular ? Int64(info.st_size) : nil, seekable: regular, nameHint: name == "-" ? nil : name)
        return MediaFile(
            fd: fd, ownsDescriptor: owns, descriptor: descriptor, title: name == "-" ? "standard input" : name)
    }

    /// Opens a sidecar subtitle file: a regular file of 1...`SubtitleFile.maximumSize` bytes.
    /// - Throws: `CastError` `.usage` otherwise.
    public static func openSubtitles(_ path: String) throws(CastError) -> MediaFile {
        let file = try open(path)
        guard file.descriptor.seekable, let size = file.descriptor.size, (1...SubtitleFile.maximumSize).contains(size)
        else {
            throw CastError(
                .usage, "\(path) is not a subtitle file of 1 byte to \(SubtitleFile.maximumSize >> 20) MB")
        }
        return file
    }

    /// The subtitle file's description in a play request.
    var subtitleFile: SubtitleFile { SubtitleFile(size: descriptor.size ?? 0, nameHint: descriptor.nameHint) }

    /// Reads up to `buffer.count` bytes at `offset` into `buffer`; returns how many. A file returns fewer bytes only
    /// at its end; a stream returns what one read gives (none at its end) and only reads in order: another offset is
    /// an error.
    func read(offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(CastError) -> Int {
        let length = buffer.count
        var filled = 0
        let position = streamPosition.load(ordering: .relaxed)
        if !descriptor.seekable && offset != position {
            throw CastError(.playback, "the receiver asked for offset \(offset) of a stream that is at \(position)")
        }
        while filled < length {
            let base = buffer.baseAddress! + filled
            let n =
                descriptor.seekable
                ? pread(fd, base, length - filled, off_t(offset) + off_t(filled))
                : Glibc.read(fd, base, length - filled)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw CastError(.playback, "cannot read \(title): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            filled += n
            // A stream answers with what it has: a live pipe must not wait for a full megabyte.
            if !descriptor.seekable { break }
        }
        if !descriptor.seekable { streamPosition.store(position + Int64(filled), ordering: .relaxed) }
        return filled
    }
}
