import CastBase
import CastDiscovery
import CastProtocol
import CastSecurity
import Dispatch
import FoundationEssentials
import Synchronization

/// A receiver reached from what the user typed (`ReceiverConnection.reach`).
public enum ReachedReceiver: Sendable {
    /// A Cast receiver: connected, its key checked, hello exchanged.
    case connected(ReceiverConnection)
    /// An AirPlay speaker: no Cast connection (`SpeakerPlayback` streams to it).
    case speaker(ReceiverDescription)
}

extension ReceiverConnection {
    /// Resolves what the user typed (as `ReceiverBrowser.resolve`) and connects to it (as `open`).
    ///
    /// A paired receiver named exactly (its name or id) whose last address is known is tried at that address at
    /// once, while discovery runs beside it (started when the last address fails, or 100 ms after it was tried,
    /// whichever comes first): the first of the two whose connection proves the pinned key wins,
    /// the other is closed before it sends anything, and the browse ends. The key check is `open`'s, as strict
    /// for either way: a wrong key at the last address is refused without a word sent, and only discovery (with
    /// its own check) can still reach the receiver elsewhere. When neither proves the key, the refusal of a wrong
    /// key wins over "not found", so an impostor at the last address gets the impersonation warning (exit 4).
    ///
    /// Words that name a paired Cast receiver never reach an AirPlay speaker, whatever `includingSpeakers` says: a
    /// speaker proves no key, so one advertising the paired receiver's name while that receiver is away would
    /// otherwise be chosen in its place (docs/security.md, "A speaker in a paired receiver's name").
    /// - Throws: `CastError` as `ReceiverBrowser.resolve` and `open` do.
    public static func reach(
        _ query: String?, browseTimeout: Duration = .seconds(2), includingSpeakers: Bool = false,
        configDirectory: String, senderName: String, timeout: Duration = .seconds(5)
    ) throws(CastError) -> ReachedReceiver {
        let includingSpeakers =
            includingSpeakers && !(query.map { namesPairedReceiver($0, configDirectory: configDirectory) } ?? false)
        guard let query, let last = lastAddress(of: query, configDirectory: configDirectory) else {
            let receiver = try ReceiverBrowser.resolve(
                query, timeout: browseTimeout, includingSpeakers: includingSpeakers)
            if receiver.kind == .speaker { return .speaker(receiver) }
            return .connected(
                try open(receiver, configDirectory: configDirectory, senderName: senderName, timeout: timeout))
        }
        let race = ReachRace()
        let browse = BrowseCancellation()
        let lastAddressFailed = DispatchSemaphore(value: 0)
        race.attempt(.lastAddress) { () throws(CastError) in
            do throws(CastError) {
                let (tls, peerID) = try connectChecked(last, configDirectory: configDirectory, timeout: timeout)
                return .checked(last, tls, peerID)
            } catch {
                lastAddressFailed.signal()
                throw error
            }
        }
        race.attempt(.discovery) { () throws(CastError) in
            // A head start for the last address: a connection and a handshake on a LAN take milliseconds, and a
            // browse started beside them (an avahi client, queries, answers) takes CPU from them on a small box. The
            // browse starts as soon as the last address fails, or after `lastAddressHeadStart` whatever it does.
            _ = lastAddressFailed.wait(timeout: .now() + .milliseconds(Self.lastAddressHeadStart))
            if browse.isCancelled { throw CastError(.noSuchReceiver, "found at its last address") }
            let found = try ReceiverBrowser.resolve(
                query, timeout: browseTimeout, includingSpeakers: includingSpeakers, cancellation: browse)
            if found.kind == .speaker { return .speaker(found) }
            let (tls, peerID) = try connectChecked(found, configDirectory: configDirectory, timeout: timeout)
            return .checked(found, tls, peerID)
        }
        let outcome = race.winner()
        browse.cancel()
        switch outcome {
        case .success(.checked(let receiver, let tls, let peerID)):
            return .connected(
                try greet(
                    receiver, over: tls, peerID: peerID, configDirectory: configDirectory, senderName: senderName,
                    timeout: timeout))
        case .success(.speaker(let speaker)):
            return .speaker(speaker)
        case .failure(let error):
            throw error
        }
    }

    /// How long discovery waits for the last address to fail before it starts anyway (ms).
    static let lastAddressHeadStart = 100

    /// Whether `query` names a paired receiver exactly (its id, or its name folded as `ReceiverPin` folds it).
    static func namesPairedReceiver(_ query: String, configDirectory: String) -> Bool {
        guard case .name = ReceiverQuery(query),
            let paired = try? KnownReceivers.load(directory: configDirectory).list()
        else { return false }
        return paired.contains { $0.id == query.lowercased() || ReceiverPin.sameName($0.name, query) }
    }

    /// The paired receiver `query` names exactly (its id, or its name folded as `ReceiverPin` folds it), as a
    /// description at the address it was last reached at; nil when none, several, or no usable address.
    static func lastAddress(of query: String, configDirectory: String) -> ReceiverDescription? {
        guard case .name = ReceiverQuery(query),
            let paired = try? KnownReceivers.load(directory: configDirectory).list()
        else { return nil }
        let named = paired.filter { $0.id == query.lowercased() || ReceiverPin.sameName($0.name, query) }
        guard named.count == 1, let known = named.first, let address = known.address,
            case .address(let host, let port) = ReceiverQuery(address)
        else { return nil }
        return ReceiverDescription(name: known.name, id: known.id, host: host, port: port, requested: query)
    }
}

/// Two ways to the same receiver run at once (`ReceiverConnection.reach`); the main thread waits for the winner.
///
/// Thread-safety: `Sendable`; `lock` guards the results and whether the race is decided. Each attempt runs on a
/// thread of its own; a connection that arrives after the race was decided is closed by its own thread, one that
/// loses while stored is closed by `winner()`.
private final class ReachRace: Sendable {
    enum Way { case lastAddress, discovery }

    /// What an attempt reached: a connection whose key was proved and on which nothing was sent, or a speaker.
    enum Reached: Sendable {
        case checked(ReceiverDescription, TLSConnection, String)
        case speaker(ReceiverDescription)

        func discard() { if case .checked(_, let tls, _) = self { tls.close() } }

        func isSame(as other: Self) -> Bool {
            switch (self, other) {
            case (.checked(_, let one, _), .checked(_, let two, _)): one === two
            case (.speaker(let one), .speaker(let two)): one == two
            default: false
            }
        }
    }

    private struct State {
        var lastAddress: Result<Reached, CastError>?
        var discovery: Result<Reached, CastError>?
        var isDecided = false
    }

    private let lock = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    func attempt(_ way: Way, _ body: @escaping @Sendable () throws(CastError) -> Reached) {
        startDetachedThread(name: way == .lastAddress ? "cast reach last address" : "cast reach discovery") { [self] in
            let result: Result<Reached, CastError>
            do throws(CastError) { result = .success(try body()) } catch { result = .failure(error) }
            let late = lock.withLock { state -> Bool in
                if state.isDecided { return true }
                switch way {
                case .lastAddress: state.lastAddress = result
                case .discovery: state.discovery = result
                }
                return false
            }
            if late, case .success(let reached) = result { reached.discard() }
            finished.signal()
        }
    }

    /// Blocks until one way proved the key (it wins), or both ended. A speaker found by discovery counts only once
    /// the last address failed: a Cast receiver of the name comes first, as in `ReceiverBrowser`.
    func winner() -> Result<Reached, CastError> {
        while true {
            finished.wait()
            let decision = lock.withLock { state -> Result<Reached, CastError>? in
                let decision = Self.decide(state.lastAddress, state.discovery)
                if decision != nil {
                    state.isDecided = true
                    // Whatever else arrived proved a key too, but lost: closed without a word.
                    for case .success(let other) in [state.lastAddress, state.discovery] {
                        if case .success(let won) = decision, won.isSame(as: other) { continue }
                        other.discard()
                    }
                }
                return decision
            }
            if let decision { return decision }
        }
    }

    private static func decide(_ last: Result<Reached, CastError>?, _ discovery: Result<Reached, CastError>?)
        -> Result<Reached, CastError>?
    {
        if case .success(let reached) = last { return .success(reached) }
        if case .success(.checked(let r, let tls, let id)) = discovery { return .success(.checked(r, tls, id)) }
        guard case .failure(let lastError) = last, let discovery else { return nil }
        switch discovery {
        case .success(let speaker): return .success(speaker)
        case .failure(let error) where error.kind != .notAuthorised && lastError.kind == .notAuthorised:
            return .failure(lastError)
        case .failure(let error): return .failure(error)
        }
    }
}
