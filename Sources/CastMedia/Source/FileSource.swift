import Glibc

/// A local file as a seekable media source, for tests and local playback.
public final class FileSource: MediaSource {
    /// The file's path, as given.
    public let path: String
    private let descriptor: Int32
    private let fileSize: Int64

    /// Opens the file for reading; throws `MediaError` when it cannot be opened.
    public init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError.system("open(\(path))", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw MediaError.system("fstat(\(path))", errno: code)
        }
        self.path = path
        self.descriptor = fd
        self.fileSize = Int64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Reads at the file position, retrying `EINTR`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = Glibc.read(descriptor, base, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw MediaError.system("read(\(path))", errno: errno)
        }
    }

    /// Moves the file position.
    public func seek(to offset: Int64) throws {
        guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
            throw MediaError.system("lseek(\(path))", errno: errno)
        }
    }

    /// The file's size when it was opened.
    public var size: Int64? { fileSize }
    /// Files are seekable.
    public var isSeekable: Bool { true }
    /// The file's last path component, so FFmpeg can use the extension when probing.
    public var nameHint: String? { path.split(separator: "/").last.map(String.init) }
}
