import CastBase
import CastSystem
import Foundation
import Synchronization

/// Closes the connections of senders unpaired since they were admitted whenever the state directory changes
/// (`castd --unpair` replaces the pairing store by rename): a thread waits on an inotify watch of it, so the change
/// takes effect at once and an idle receiver never wakes to look. Where the directory cannot be watched, the store
/// is looked at every `checkInterval` instead, and the log says so.
///
/// It only says when to look (`onChange`); what to close is the receiver's (`Receiver.closeRevokedConnections`).
///
/// Thread-safety: `Sendable`; whether it was stopped and the directory watch (closed by `stop`, which wakes the
/// thread) live in a `Mutex`. `onChange` runs on the watch's thread or on Dispatch's, never with the lock held.
final class RevocationWatch: Sendable {
    /// How often the pairing store is looked at for senders unpaired while connected when its directory cannot be
    /// watched (inotify refused, or the directory was removed): an `lstat` of the store, and a read only when another
    /// process replaced it, so that `castd --unpair` takes effect within this.
    static let checkInterval: Duration = .milliseconds(250)

    private struct State {
        var stopped = false
        var watch: DirectoryWatch?
    }

    private let directory: String
    private let logger: Logger
    private let state = Mutex(State())

    /// A watch of `directory` (the state directory); nothing is watched before `start`.
    init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Starts watching: `onChange` is called whenever the pairing store may have changed (from the inotify thread, or
    /// where the directory cannot be watched, every interval), until `stop`.
    func start(onChange: @escaping @Sendable () -> Void) {
        let watch: DirectoryWatch
        do {
            watch = try DirectoryWatch(directory: directory)
        } catch {
            logger.warning(
                "cannot watch \(directory) for unpaired senders (\(error)); "
                    + "looking at the pairing store every \(Self.checkInterval) instead")
            poll(onChange)
            return
        }
        let started = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.watch = watch
            return true
        }
        guard started else { return }
        startDetachedThread(name: "castd revocations") { [weak self] in
            while true {
                let event = watch.wait()
                guard let self else { return }
                switch event {
                case .changed:
                    onChange()
                case .closed:
                    return
                case .directoryGone:
                    logger.warning(
                        "the state directory \(watch.directory) was removed or moved; "
                            + "looking at the pairing store every \(Self.checkInterval) instead")
                    onChange()
                    poll(onChange)
                    return
                }
            }
        }
    }

    /// Stops watching: the thread wakes and ends, the looks stop. Idempotent.
    func stop() {
        let watch = state.withLock { state in
            state.stopped = true
            defer { state.watch = nil }
            return state.watch
        }
        watch?.close()
    }

    /// Looks at the pairing store, then again after the interval: `start` without inotify.
    private func poll(_ onChange: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.checkInterval.timeInterval) { [weak self] in
            guard let self, !state.withLock({ $0.stopped }) else { return }
            onChange()
            poll(onChange)
        }
    }
}
