/// Sender → receiver: images of the media that plays now, at these times (the seeds'
/// `requestThumbnailImages(at:timeOption:)`). JSON: `{"request":7,"times":[1.5,30],"exact":true,"maxWidth":640}`.
///
/// The receiver answers each time, in order, with `thumbnail` messages (`ThumbnailPart`): the PNG in parts, or an
/// error. `thumbnailCancel` (`{}`) cancels every request of the connection not answered yet; each cancelled time is
/// answered with the error `cancelled`.
public struct ThumbnailRequest: Codable, Sendable, Equatable {
    /// The sender's number for this request, echoed in every answer.
    public var request: UInt32
    /// Media times in seconds, 1 to `maximumTimes` of them, each finite and 0...10⁷.
    public var times: [Double]
    /// True: the frame shown at each time (decoded forward from the key frame before it); false: the key frame at or
    /// before it (faster).
    public var exact: Bool
    /// The widest image wanted (16...`maximumWidth` pixels); nil: the video's width, at most `maximumWidth`.
    public var maxWidth: Int?

    /// The most times in one request.
    public static let maximumTimes = 32
    /// The widest image a receiver sends.
    public static let maximumWidth = 1920

    /// Creates a request.
    public init(request: UInt32, times: [Double], exact: Bool, maxWidth: Int? = nil) {
        self.request = request
        self.times = times
        self.exact = exact
        self.maxWidth = maxWidth
    }

    /// Why the request may not be served (nil when it may).
    var problem: String? {
        guard (1...Self.maximumTimes).contains(times.count) else { return "needs 1 to \(Self.maximumTimes) times" }
        guard times.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1e7 }) else {
            return "times must be finite seconds from 0 to 10^7"
        }
        if let maxWidth, !(16...Self.maximumWidth).contains(maxWidth) {
            return "maxWidth must be 16...\(Self.maximumWidth)"
        }
        return nil
    }
}

extension ThumbnailRequest: MessageBody {
    func check() throws(ProtocolError) {
        try reportProblem(problem, in: "thumbnailRequest")
    }
}
