import Dispatch
import Synchronization

/// Delivers an ``Advertiser``'s events on a serial queue of their own, in order.
///
/// Never on avahi's poll thread: a handler that calls `stop()` there would wait for the poll thread to end,
/// i.e. for itself. Once closed, no further event starts being delivered.
final class AdvertiserEventSink: Sendable {
    private let queue = DispatchQueue(label: "cast.discovery.advertiser-events")
    private let handler: @Sendable (AdvertiserEvent) -> Void
    private let isClosed = Atomic<Bool>(false)

    init(_ handler: @escaping @Sendable (AdvertiserEvent) -> Void) {
        self.handler = handler
    }

    func send(_ event: AdvertiserEvent) {
        queue.async { [self] in
            guard !isClosed.load(ordering: .acquiring) else { return }
            handler(event)
        }
    }

    func close() {
        isClosed.store(true, ordering: .releasing)
    }
}
