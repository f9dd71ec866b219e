import Glibc
import Synchronization

/// Wakes a thread when anything in one directory is written, created, replaced, renamed, removed or changes mode
/// (inotify): what castd's revocation watcher waits on, so that `castd --unpair` (which replaces the pairing store by
/// rename) or an edit of the store by hand takes effect at once, and an idle receiver does not wake to look.
///
/// `wait()` blocks in poll(2) on the inotify descriptor and on a socket that `close()` writes to. The descriptors are
/// closed when the last reference goes, never under a thread that may still poll them.
///
/// Thread-safety: `Sendable`. One thread at a time calls `wait()`; `close()` may be called from any thread, any number
/// of times. The descriptors are immutable after `init`; `closed` is an `Atomic`.
public final class DirectoryWatch: Sendable {
    /// What ended a `wait()`.
    public enum Event: Sendable, Equatable {
        /// Something in the directory changed (or so many things that the kernel's queue overflowed).
        case changed
        /// The directory itself was removed, renamed or unmounted: nothing more will be reported.
        case directoryGone
        /// `close()` was called.
        case closed
    }

    public let directory: String
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let closed = Atomic(false)

    /// The events of files in the directory that a change of one of them makes (a write by rename makes IN_MOVED_TO;
    /// an edit in place IN_CLOSE_WRITE; chmod IN_ATTRIB), and of the directory itself.
    private static let mask: UInt32 =
        UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
        | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

    /// Starts watching `directory`, which must exist and be a directory.
    /// - Throws: `.system` when inotify cannot be used (the user's inotify instances or watches are used up, see
    ///   `/proc/sys/fs/inotify`), or the directory cannot be watched.
    public init(directory: String) throws(SecurityError) {
        self.directory = directory
        let inotify = try systemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
        do {
            _ = try systemCall("inotify_add_watch") { inotify_add_watch(inotify, directory, Self.mask) }
        } catch {
            closeDescriptor(inotify)
            throw error
        }
        // A socket pair as the wake-up pipe: pipe2(2), which sets close-on-exec atomically (castd starts worker
        // processes from other threads), is a GNU extension Swift's Glibc module does not declare.
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else {
            let code = errno
            closeDescriptor(inotify)
            throw SecurityError(.system, function: "socketpair", errno: code, "socketpair failed")
        }
        self.inotify = inotify
        (wakeRead, wakeWrite) = (pair[0], pair[1])
    }

    deinit {
        closeDescriptor(inotify)
        closeDescriptor(wakeRead)
        closeDescriptor(wakeWrite)
    }

    /// Blocks until something in the directory changes, the directory goes, or `close()` is called. Every change
    /// queued when it returns is consumed, so a burst of events (a store's lock file, temporary file and rename) ends
    /// one wait.
    public func wait() -> Event {
        var descriptors = [
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            if closed.load(ordering: .acquiring) { return .closed }
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .directoryGone
            }
            if descriptors[1].revents != 0 { return .closed }
            let revents = descriptors[0].revents
            if revents & Int16(POLLIN) != 0 {
                switch drain() {
                case .some(let event): return event
                case .none: continue  // a spurious wake-up: nothing was queued
                }
            }
            if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .directoryGone }
        }
    }

    /// Wakes a `wait()` in progress (and every later one), which returns `.closed`.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    /// Reads every queued inotify event: nil when none was queued, `.directoryGone` when one says the directory went
    /// (or its watch was removed), `.changed` otherwise.
    private func drain() -> Event? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var event: Event?
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return event  // EAGAIN: the queue is empty
            }
            if count == 0 { return event }
            var offset = 0
            buffer.withUnsafeBytes { bytes in
                // struct inotify_event: wd, mask, cookie, len (4 bytes each), then `len` bytes of name.
                while offset + 16 <= count {
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let gone = UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_UNMOUNT) | UInt32(IN_IGNORED)
                    if mask & gone != 0 {
                        event = .directoryGone
                    } else if event == nil {
                        event = .changed
                    }
                    offset += 16 + nameLength
                }
            }
        }
    }
}
