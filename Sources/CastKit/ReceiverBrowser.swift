import CastDiscovery
import CastProtocol

/// Finds receivers on the local network over mDNS (avahi-daemon).
public enum ReceiverBrowser {
    /// Every receiver that answers within `timeout`, sorted by name. Advertisements whose TXT record
    /// is not a usable receiver record are left out.
    /// - Throws: `CastError` `.discovery` when avahi-daemon is not running.
    public static func receivers(timeout: Duration = .seconds(2)) throws(CastError) -> [ReceiverDescription] {
        try receivers(timeout: timeout, until: nil)
    }

    private static func receivers(timeout: Duration, until stop: ((DiscoveredReceiver) -> Bool)?) throws(CastError)
        -> [ReceiverDescription]
    {
        let found: [DiscoveredReceiver]
        do {
            found = try Browser.browse(serviceType: serviceType, timeout: timeout, until: stop)
        } catch {
            throw CastError(.discovery, "cannot browse for receivers: \(error)")
        }
        return found.compactMap { service -> ReceiverDescription? in
            guard let record = ServiceRecord(txt: service.txt) else { return nil }
            return ReceiverDescription(
                name: service.name, id: record.id, host: service.address, port: service.port, record: record)
        }.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// Resolves what the user typed: an address directly, a name through discovery.
    /// - Throws: `CastError` `.noSuchReceiver` (with the names in sight) or `.discovery`.
    public static func resolve(_ query: String?, timeout: Duration = .seconds(2)) throws(CastError)
        -> ReceiverDescription
    {
        if let query, case .address(let host, let port) = ReceiverQuery(query) {
            return ReceiverDescription(name: query, id: "", host: host, port: port)
        }
        // An exact name or id ends the search at once; a prefix needs everything in sight to be unique.
        let exact = query?.lowercased()
        let stop: ((DiscoveredReceiver) -> Bool)? = exact.map { exact in
            { $0.name.lowercased() == exact || $0.txt["id"]?.lowercased() == exact }
        }
        return try ReceiverQuery.match(query, in: receivers(timeout: timeout, until: stop))
    }
}

/// A change among the receivers in sight (`ReceiverBrowser.updates()`).
public enum ReceiverBrowserEvent: Sendable, Equatable {
    /// A receiver was found.
    case appeared(ReceiverDescription)
    /// A receiver's address, port or record changed (its name is the same).
    case updated(ReceiverDescription)
    /// A receiver left (its name as it was seen).
    case disappeared(name: String)
}

extension ReceiverBrowser {
    /// The receivers as they appear, change and disappear, from now until the stream is dropped or avahi fails (the
    /// stream then throws `CastError` `.discovery`). Every receiver already in sight appears first.
    /// - Throws: `CastError` `.discovery` at once when avahi-daemon is not running.
    public static func updates() throws(CastError) -> AsyncThrowingStream<ReceiverBrowserEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ReceiverBrowserEvent.self)
        let watch: BrowseWatch
        do {
            watch = try Browser.watch(
                serviceType: serviceType,
                onEvent: { event in
                    switch event {
                    case .appeared(let service):
                        if let receiver = description(of: service) { continuation.yield(.appeared(receiver)) }
                    case .updated(let service):
                        if let receiver = description(of: service) { continuation.yield(.updated(receiver)) }
                    case .disappeared(let name):
                        continuation.yield(.disappeared(name: name))
                    }
                },
                onEnd: { error in
                    continuation.finish(throwing: error.map { CastError(.discovery, "lost avahi-daemon: \($0)") })
                })
        } catch {
            throw CastError(.discovery, "cannot browse for receivers: \(error)")
        }
        continuation.onTermination = { _ in watch.cancel() }
        return stream
    }

    /// A receiver from a service whose TXT record is ours; nil for anything else under the type.
    private static func description(of service: DiscoveredReceiver) -> ReceiverDescription? {
        guard let record = ServiceRecord(txt: service.txt) else { return nil }
        return ReceiverDescription(name: service.name, id: record.id, host: service.address, port: service.port, record: record)
    }
}
