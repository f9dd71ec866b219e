import CastProtocol
import CastSystem
import FoundationEssentials
import Glibc
import Synchronization

/// The contents of one trust store file.
protocol TrustStoreDocument: Codable, Sendable {
    /// The document of a store that has no file yet.
    static var empty: Self { get }
    /// How many entries it holds (checked against `TrustStoreLimits.maximumEntries`).
    var entryCount: Int { get }
}

/// The bounds every trust store file is held to, so a hostile or broken file cannot exhaust memory.
public enum TrustStoreLimits {
    /// Files larger than this are refused: 1 MiB.
    public static let maximumFileSize = 1 << 20
    /// Stores with more entries are refused, and adding past it throws.
    public static let maximumEntries = 1000
    /// The longest name (in UTF-8 bytes) an entry may carry, as the protocol's longest text field.
    public static let maximumNameLength = 1024
}

/// One JSON trust store file in a directory, with an in-memory copy of its document.
///
/// Reading: the file must be a regular file of mode 0600 or stricter (anything granting group or others
/// access is refused, as ssh refuses such keys), at most 1 MiB, valid JSON of the document's shape, with at
/// most 1000 entries. Any violation throws `.trustStore` naming the file and what is wrong, and the file is
/// never rewritten by us until the user fixes or removes it.
///
/// Writing (`update`): under an exclusive `flock` on `<file>.lock` (so two processes, e.g. `castd` and
/// `castd --unpair`, never lose each other's changes), the file is re-read, changed, written to a temporary
/// file in the same directory (mode 0600), fsynced, renamed over the old one, and the directory is fsynced.
/// A crash at any moment leaves either the old or the new file, never a mixture; leftover temporary files
/// are removed by the next writer.
///
/// Thread-safety: `Sendable`; the cached document lives in a `Mutex`, and the mutex is always taken before
/// the file lock, so the two never deadlock.
final class TrustStoreFile<Document: TrustStoreDocument>: Sendable {
    let directory: String
    let path: String
    private let cache: Mutex<Cached>

    private struct Cached: Sendable {
        var document: Document
        /// Identifies the file version `document` was read from; `nil` when there was no file.
        var stamp: FileStamp?
    }

    /// Loads `<directory>/<fileName>`; a missing file (or directory) is an empty store. The directory must pass
    /// `PrivateDirectory.check`.
    init(directory: String, fileName: String) throws(SecurityError) {
        self.directory = directory
        path = directory + "/" + fileName
        try PrivateDirectory.check(directory, kind: .trustStore)
        let (document, stamp) = try Self.read(path: path)
        cache = Mutex(Cached(document: document, stamp: stamp))
    }

    /// The document, re-read first if another process replaced the file since we last read it.
    func current() throws(SecurityError) -> Document {
        try cache.withLock { (cached: inout Cached) throws(SecurityError) -> Document in
            if FileStamp(path: path) != cached.stamp {
                let (document, stamp) = try Self.read(path: path)
                cached = Cached(document: document, stamp: stamp)
            }
            return cached.document
        }
    }

    /// Changes the document and saves it atomically (see the type's documentation). When `body` or the
    /// save throws, neither the file nor the in-memory copy changes.
    func update<Result>(_ body: (inout Document) throws(SecurityError) -> Result) throws(SecurityError) -> Result {
        try cache.withLock { (cached: inout Cached) throws(SecurityError) -> Result in
            try PrivateDirectory.create(directory)
            try PrivateDirectory.check(directory, kind: .trustStore)
            let lock = try FileLock(path: path + ".lock")
            defer { lock.release() }
            var (document, _) = try Self.read(path: path)
            let result = try body(&document)
            guard document.entryCount <= TrustStoreLimits.maximumEntries else {
                throw SecurityError(
                    .trustStore, "trust store \(path) is full (\(TrustStoreLimits.maximumEntries) entries)")
            }
            try write(encode(document))
            cached = Cached(document: document, stamp: FileStamp(path: path))
            return result
        }
    }

    // MARK: Reading

    private static func read(path: String) throws(SecurityError) -> (Document, FileStamp?) {
        guard
            let (bytes, status) = try WholeFile.readPrivate(
                path, what: "trust store", kind: .trustStore, limit: TrustStoreLimits.maximumFileSize)
        else { return (Document.empty, nil) }
        let document: Document
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            document = try decoder.decode(Document.self, from: Data(bytes))
        } catch {
            throw SecurityError(
                .trustStore,
                "trust store \(path) is corrupt (\(describe(error))); it was left as it is: repair or remove it")
        }
        guard document.entryCount <= TrustStoreLimits.maximumEntries else {
            throw SecurityError(
                .trustStore,
                "trust store \(path) has \(document.entryCount) entries, more than the \(TrustStoreLimits.maximumEntries) allowed"
            )
        }
        return (document, FileStamp(status))
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.keyNotFound(_, let context),
            DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let at = context.codingPath.map(\.stringValue).joined(separator: ".")
            return (at.isEmpty ? "" : "at '\(at)': ") + context.debugDescription
        default:
            return "\(error)"
        }
    }

    // MARK: Writing

    private func encode(_ document: Document) throws(SecurityError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return Array(try encoder.encode(document)) + [UInt8(ascii: "\n")]
        } catch {
            preconditionFailure("encoding a trust store cannot fail: \(error)")
        }
    }

    private func write(_ bytes: [UInt8]) throws(SecurityError) {
        guard bytes.count <= TrustStoreLimits.maximumFileSize else {
            throw SecurityError(
                .trustStore, "trust store \(path) would exceed \(TrustStoreLimits.maximumFileSize) bytes")
        }
        removeStaleTemporaryFiles()
        try WholeFile.replace(path, in: directory, with: bytes, what: "trust store")
    }

    /// Temporary files of writers that died before their rename. Only called under the file lock, so no
    /// live writer owns one.
    private func removeStaleTemporaryFiles() {
        let prefix = path.lastPathComponent + ".tmp-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(prefix) {
            unlink(directory + "/" + name)
        }
    }

}

/// Which version of a file we read: a save renames a new inode into place, so any change shows.
struct FileStamp: Equatable, Sendable {
    private let device: UInt64
    private let inode: UInt64
    private let size: Int64
    private let modifiedSeconds: Int
    private let modifiedNanoseconds: Int

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = status.st_mtim.tv_sec
        modifiedNanoseconds = status.st_mtim.tv_nsec
    }

    /// The stamp of the file at `path`, or `nil` when it does not exist (or cannot be examined).
    init?(path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// An exclusive `flock` on a lock file, held until `release()`.
private struct FileLock {
    private let fd: Int32

    init(path: String) throws(SecurityError) {
        do throws(SecurityError) {
            fd = try systemCall("open") { Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        } catch {
            throw SecurityError(
                error.kind, function: error.function, errno: error.errno, "cannot open lock file \(path)")
        }
        do throws(SecurityError) {
            try systemCall("flock") { flock(fd, LOCK_EX) }
        } catch {
            closeDescriptor(fd)
            throw error
        }
    }

    /// Unlocks (closing the descriptor drops the lock).
    func release() {
        closeDescriptor(fd)
    }
}
