import CastBase
import CastDiscovery
import CastProtocol
import CastRAOP
import Dispatch
import FoundationEssentials
import Synchronization

/// Finds receivers on the local network over mDNS (avahi-daemon).
public enum ReceiverBrowser {
    /// Every receiver that answers within `timeout`, sorted by name. Advertisements whose TXT record
    /// is not a usable receiver record are left out. With `includingSpeakers`, AirPlay 1 speakers
    /// (`_raop._tcp`, kind `.speaker`) are browsed at the same time and listed too, under the name after the `@`
    /// of their instance name and with their hardware address as id.
    /// - Throws: `CastError` `.discovery` when avahi-daemon is not running.
    public static func receivers(timeout: Duration = .seconds(2), includingSpeakers: Bool = false) throws(CastError)
        -> [ReceiverDescription]
    {
        try receivers(timeout: timeout, until: nil, includingSpeakers: includingSpeakers, cancellation: nil)
    }

    /// The DNS-SD service type of AirPlay 1 speakers.
    public static let speakerServiceType = "_raop._tcp"

    private static func receivers(
        timeout: Duration, until stop: (@Sendable (ReceiverDescription) -> Bool)?, includingSpeakers: Bool,
        cancellation: BrowseCancellation?
    ) throws(CastError) -> [ReceiverDescription] {
        // The two browses run at once, each with its own avahi client: a listing takes as long as one. A Cast
        // receiver that is what the caller looks for ends the speaker browse too (it would win over a speaker of
        // the same name anyway), so that a send by exact name does not wait out the speakers' listing. A caller's
        // `cancellation` ends both (the Cast browse is returning anyway when the speaker browse is ended for it).
        let speakers = Mutex<Result<[DiscoveredReceiver], any Error>>(.success([]))
        let speakerBrowse = cancellation ?? BrowseCancellation()
        let speakersDone = DispatchSemaphore(value: 0)
        if includingSpeakers {
            startDetachedThread(name: "cast browse speakers") {
                let found = Result {
                    try Browser.browse(
                        serviceType: speakerServiceType, timeout: timeout,
                        until: stop.map { stop in { stop(speaker($0)) } }, cancellation: speakerBrowse)
                }
                speakers.withLock { $0 = found }
                speakersDone.signal()
            }
        } else {
            speakersDone.signal()
        }
        let found: [DiscoveredReceiver]
        do {
            found = try Browser.browse(
                serviceType: serviceType, timeout: timeout,
                until: stop.map { stop in
                    { service in
                        let isFound = receiver(service).map(stop) ?? false
                        if isFound { speakerBrowse.cancel() }
                        return isFound
                    }
                }, cancellation: cancellation)
        } catch {
            speakerBrowse.cancel()
            speakersDone.wait()
            throw CastError(.discovery, "cannot browse for receivers: \(error)")
        }
        speakersDone.wait()
        var all = found.compactMap(receiver)
        if case .success(let seen) = speakers.withLock({ $0 }) { all += seen.map(speaker) }
        // Names as people order them ("Room 2" before "Room 10"); a Cast receiver and a speaker of the same name: the
        // Cast receiver first, so that a name picks it.
        return all.sorted {
            let order = compareNaturally($0.name, $1.name)
            if order != 0 { return order < 0 }
            if $0.kind != $1.kind { return $0.kind == .cast }
            return $0.name < $1.name
        }
    }

    private static func receiver(_ service: DiscoveredReceiver) -> ReceiverDescription? {
        guard let record = ServiceRecord(txt: service.txt) else { return nil }
        return ReceiverDescription(
            name: service.name, id: record.id, host: service.address, port: service.port, record: record)
    }

    private static func speaker(_ service: DiscoveredReceiver) -> ReceiverDescription {
        let parts = SpeakerInstanceName(service.name)
        return ReceiverDescription(
            name: parts.name, id: parts.hardwareAddress ?? "", host: service.address, port: service.port,
            kind: .speaker)
    }

    /// Resolves what the user typed: an address directly, a name through discovery.
    /// - Throws: `CastError` `.noSuchReceiver` (with the names in sight) or `.discovery`.
    /// With `includingSpeakers`, AirPlay speakers are candidates too (see `receivers(timeout:includingSpeakers:)`).
    public static func resolve(_ query: String?, timeout: Duration = .seconds(2), includingSpeakers: Bool = false)
        throws(CastError) -> ReceiverDescription
    {
        try resolve(query, timeout: timeout, includingSpeakers: includingSpeakers, cancellation: nil)
    }

    /// `resolve`, ended early (with what is in sight by then) when `cancellation` is cancelled.
    static func resolve(
        _ query: String?, timeout: Duration, includingSpeakers: Bool, cancellation: BrowseCancellation?
    ) throws(CastError) -> ReceiverDescription {
        if let query, case .address(let host, let port) = ReceiverQuery(query) {
            return ReceiverDescription(name: query, id: "", host: host, port: port, requested: query)
        }
        // An exact name or id ends the search at once; a prefix needs everything in sight to be unique.
        var stop: (@Sendable (ReceiverDescription) -> Bool)?
        if let exact = query?.lowercased() {
            stop = { candidate in
                candidate.name.lowercased() == exact || (!candidate.id.isEmpty && candidate.id.lowercased() == exact)
            }
        }
        var found = try ReceiverQuery.match(
            query,
            in: receivers(
                timeout: timeout, until: stop, includingSpeakers: includingSpeakers, cancellation: cancellation))
        found.requested = query
        return found
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
        return ReceiverDescription(
            name: service.name, id: record.id, host: service.address, port: service.port, record: record)
    }
}
