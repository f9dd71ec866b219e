internal import CAvahi
import Glibc

/// The avahi side of one ``Advertiser``: a client, its entry group and a reconnection timer, all on one
/// `AvahiThreadedPoll`.
///
/// Confinement (why this class needs no lock of its own): every stored property is touched only
/// - on the poll thread, from avahi's callbacks, or
/// - by a thread that holds `avahi_threaded_poll_lock` (``Advertiser/update(txt:)``), or
/// - while the poll thread is not running: ``connect()`` before `avahi_threaded_poll_start`, ``close()`` after
///   `avahi_threaded_poll_stop`.
/// avahi's callbacks get this object unretained; ``Advertiser`` keeps it alive until ``close()`` has freed the
/// client and the timer, after which no callback can name it.
final class AvahiPublication {
    /// First delay before trying to reach a missing system bus again; doubled up to ``maximumRetryDelay``.
    private static let initialRetryDelay = 500
    private static let maximumRetryDelay = 5_000

    private let api: UnsafePointer<AvahiPoll>
    private let events: AdvertiserEventSink
    private let serviceType: String
    private let port: UInt16
    /// The name we publish under: the requested one, or avahi's alternative after a collision.
    private var name: String
    private var txt: [String: String]
    private var client: OpaquePointer?
    private var group: OpaquePointer?
    private var retryTimer: OpaquePointer?
    private var retryDelay = AvahiPublication.initialRetryDelay
    /// Whether `.daemonUnavailable` was reported since the daemon last ran, so it is reported once per outage.
    private var isReportedUnavailable = false

    init(
        _ advertisement: ServiceAdvertisement, serviceType: String, api: UnsafePointer<AvahiPoll>,
        events: AdvertiserEventSink
    ) {
        self.api = api
        self.events = events
        self.serviceType = serviceType
        self.port = advertisement.port
        self.name = advertisement.name
        self.txt = advertisement.txt
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func publication(_ userdata: UnsafeMutableRawPointer?) -> AvahiPublication {
        Unmanaged<AvahiPublication>.fromOpaque(userdata!).takeUnretainedValue()
    }

    // MARK: Called by Advertiser

    /// Creates the retry timer (disarmed) and the client. Called before the poll thread starts.
    func connect() {
        retryTimer = api.pointee.timeout_new(
            api, nil,
            { _, userdata in
                AvahiPublication.publication(userdata).retryTimerFired()
            }, context)
        createClient()
    }

    /// Replaces the TXT record; published at once when the service is on the network, else when it gets there.
    func update(txt newTXT: [String: String]) {
        txt = newTXT
        guard let client, cast_avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING,
            let group, cast_avahi_entry_group_is_empty(group) == 0
        else { return }
        let list = TXTRecord.makeStringList(txt)
        defer { cast_avahi_string_list_free(list) }
        let result = cast_avahi_entry_group_update_service_txt_strlst(
            group, Avahi.anyInterface, Avahi.anyProtocol, AvahiPublishFlags(0), name, serviceType, nil, list)
        if result < 0 { events.send(.failed("cannot update the TXT record: \(Avahi.message(result))")) }
    }

    /// Frees the client (which withdraws the service and frees the group) and the timer. Poll thread stopped.
    func close() {
        if let retryTimer { api.pointee.timeout_free(retryTimer) }
        retryTimer = nil
        if let client { cast_avahi_client_free(client) }
        client = nil
        group = nil
    }

    // MARK: The client

    private func createClient() {
        var error: Int32 = 0
        // NO_FAIL: with the bus up but no daemon, the client waits in CONNECTING and follows the daemon as it
        // comes and goes. Only a missing system bus makes avahi_client_new fail; then we retry on a timer.
        let created = cast_avahi_client_new(
            api, AVAHI_CLIENT_NO_FAIL,
            { client, state, userdata in
                AvahiPublication.publication(userdata).clientChanged(client, state)
            }, context, &error)
        if let created {
            client = created
        } else {
            reportUnavailable("the system bus is not reachable (\(Avahi.message(error)))")
            scheduleRetry(afterMilliseconds: retryDelay)
            retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        }
    }

    private func clientChanged(_ changed: OpaquePointer?, _ state: AvahiClientState) {
        // The first call comes from inside avahi_client_new, before it has returned the pointer.
        client = changed
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            isReportedUnavailable = false
            retryDelay = Self.initialRetryDelay
            publish()
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The daemon is (re)establishing its host name, maybe after a host name collision (which it
            // resolves itself; our service name is not in question). Withdraw; S_RUNNING publishes again.
            if let group { cast_avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            reportUnavailable("avahi-daemon is not running")
        case AVAHI_CLIENT_FAILURE:
            // Typically AVAHI_ERR_DISCONNECTED: the daemon (or the bus) went away. This client is dead; a new
            // one (NO_FAIL) waits for the daemon. Not freed here, inside its own callback, but from the timer.
            let error = changed.map { cast_avahi_client_errno($0) } ?? Avahi.errorDisconnected
            reportUnavailable("lost avahi-daemon (\(Avahi.message(error)))")
            scheduleRetry(afterMilliseconds: 0)
        default:
            break
        }
    }

    private func retryTimerFired() {
        api.pointee.timeout_update(retryTimer, nil)
        if let client { cast_avahi_client_free(client) }
        client = nil
        group = nil
        createClient()
    }

    private func scheduleRetry(afterMilliseconds delay: Int) {
        guard let retryTimer else { return }
        var when = timeval()
        gettimeofday(&when, nil)
        let microseconds = Int(when.tv_usec) + (delay % 1000) * 1000
        when.tv_sec += delay / 1000 + microseconds / 1_000_000
        when.tv_usec = .init(microseconds % 1_000_000)
        api.pointee.timeout_update(retryTimer, &when)
    }

    private func reportUnavailable(_ reason: String) {
        guard !isReportedUnavailable else { return }
        isReportedUnavailable = true
        events.send(.daemonUnavailable("\(reason): \(name) is not advertised; waiting for avahi-daemon"))
    }

    // MARK: The entry group

    /// Adds the service to the group and commits it, unless it is there already.
    private func publish() {
        guard let client else { return }
        if group == nil {
            group = cast_avahi_entry_group_new(
                client,
                { group, state, userdata in
                    AvahiPublication.publication(userdata).groupChanged(group, state)
                }, context)
            if group == nil {
                events.send(.failed("cannot create an entry group: \(Avahi.message(cast_avahi_client_errno(client)))"))
                return
            }
        }
        guard let group, cast_avahi_entry_group_is_empty(group) != 0 else { return }
        addAndCommit(group)
    }

    private func addAndCommit(_ group: OpaquePointer) {
        // A name taken by another service of this same daemon is refused at once with AVAHI_ERR_COLLISION;
        // a name taken elsewhere on the network shows up later as AVAHI_ENTRY_GROUP_COLLISION.
        for _ in 0..<32 {
            let list = TXTRecord.makeStringList(txt)
            let added = cast_avahi_entry_group_add_service_strlst(
                group, Avahi.anyInterface, Avahi.anyProtocol, AvahiPublishFlags(0), name, serviceType, nil, nil, port,
                list)
            cast_avahi_string_list_free(list)
            if added == Avahi.errorCollision {
                takeAlternativeName()
                cast_avahi_entry_group_reset(group)
                continue
            }
            if added < 0 {
                events.send(.failed("cannot add \(name) (\(serviceType)): \(Avahi.message(added))"))
                return
            }
            let committed = cast_avahi_entry_group_commit(group)
            if committed < 0 { events.send(.failed("cannot commit \(name): \(Avahi.message(committed))")) }
            return
        }
        events.send(.failed("no free name found for \(name)"))
    }

    private func groupChanged(_ changed: OpaquePointer?, _ state: AvahiEntryGroupState) {
        guard let changed else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            events.send(.published(name: name))
        case AVAHI_ENTRY_GROUP_COLLISION:
            takeAlternativeName()
            cast_avahi_entry_group_reset(changed)
            addAndCommit(changed)
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = cast_avahi_client_errno(cast_avahi_entry_group_get_client(changed))
            events.send(.failed("publishing \(name) failed: \(Avahi.message(error))"))
        default:
            break
        }
    }

    private func takeAlternativeName() {
        guard let alternative = cast_avahi_alternative_service_name(name) else { return }
        let newName = String(cString: alternative)
        cast_avahi_free(alternative)
        events.send(.renamed(from: name, to: newName))
        name = newName
    }
}
