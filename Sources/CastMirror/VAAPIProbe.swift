import CastBase

/// cast-mirror's VA-API probe: the device opened (`VAAPIDevice`) and `h264_vaapi` opened on it at the picture's size
/// (`VAAPIScreenEncoder`), on a thread of its own and waited for at most `timeout` seconds, so that a driver that
/// hangs in its initialisation (a wedged GPU) costs the helper that long, not forever. The encoder it opened is the
/// one cast-mirror goes on with.
public enum VAAPIProbe {
    /// How long the probe is waited for: a GPU's driver starts in well under a second.
    public static let timeout = 5.0

    /// The encoder on `device` (nil: the first render node in `renderNodes`) for `width`×`height` pictures at about
    /// `fps` a second from `bitRate` bits per second, or why there is none, in words.
    public static func open(
        device: String?, renderNodes: String = VAAPIDevice.renderNodes, width: Int, height: Int, fps: Int,
        bitRate: Int, timeout: Double = VAAPIProbe.timeout
    ) -> Result<VAAPIScreenEncoder, MirrorError> {
        bounded(
            timeout: timeout,
            what: "VA-API device \(device ?? VAAPIDevice.firstRenderNode(in: renderNodes) ?? renderNodes)"
        ) {
            () throws(MirrorError) -> VAAPIScreenEncoder in
            let opened = try VAAPIDevice(path: device, renderNodes: renderNodes)
            return try VAAPIScreenEncoder(device: opened, width: width, height: height, fps: fps, bitRate: bitRate)
        }
    }

    /// `body`'s outcome, run on a thread of its own and waited for at most `timeout` seconds; after that a failure
    /// that says `what` did not answer, and what `body` makes later is freed on its thread, never handed over.
    public static func bounded<Value>(
        timeout: Double, what: String, _ body: sending @escaping () throws(MirrorError) -> Value
    ) -> Result<Value, MirrorError> {
        // The value is made on the probe's thread and handed over whole to the waiting one (or dropped there once the
        // wait gave up): never used by both.
        let outcome = Monitor<(result: Result<Value, MirrorError>?, abandoned: Bool)>((nil, false))
        startDetachedThread(name: "cast-mirror probe") {
            let result = Result(catching: body)
            let late = outcome.withLock { state -> Result<Value, MirrorError>? in
                if state.abandoned { return result }
                state.result = result
                return nil
            }
            _ = late  // Freed here, on this thread, when the wait gave up.
        }
        outcome.wait(until: { $0.result != nil }, timeout: timeout)
        return outcome.withLock { state in
            guard let result = state.result.take() else {
                state.abandoned = true
                return .failure(
                    MirrorError("\(what) did not answer within \(timeout.formatted(maximumFractionDigits: 1)) s"))
            }
            return result
        }
    }
}

extension Double {
    /// The number with at most `maximumFractionDigits` digits after the point, none when it is whole ("5", "0.2").
    fileprivate func formatted(maximumFractionDigits digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (self * scale).rounded() / scale
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
