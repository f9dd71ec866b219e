import CastProtocol

/// Thumbnails of what plays, for the session's own sender only.
///
/// Thread-safety: the session is read from `state` (the receiver's `Mutex`); it makes and cancels the images under
/// its own lock.
extension Receiver {
    /// The error of each time of a thumbnail request from a sender whose session does not play.
    static let anotherSendersThumbnails = "what plays is another sender's"

    /// Answers a thumbnail request with images of the media that plays, on `writer`'s connection: only to the
    /// session's own sender (`isOwnersSender`: the images show what another sender plays, and making them costs a
    /// decoder). With nothing playing, or to another sender, every time is answered with an error.
    func thumbnails(_ request: ThumbnailRequest, writer: MessageWriter) {
        func refuse(_ why: String) {
            for (index, time) in request.times.enumerated() {
                try? writer.send(
                    .thumbnail(ThumbnailPart(request: request.request, index: index, time: time, error: why)))
            }
        }
        guard let session = currentSession else { return refuse("nothing plays") }
        guard session.isOwnersSender(writer) else { return refuse(Self.anotherSendersThumbnails) }
        let logger = self.logger
        let title = session.request.title
        session.thumbnails(request, writer: writer) { failure in
            logger.warning("thumbnails of \"\(title)\": \(failure)")
        }
    }

    /// Cancels the thumbnail requests not answered yet (each is answered `cancelled`), when `writer` is the session's
    /// own sender's (another sender has none to cancel).
    func cancelThumbnails(writer: MessageWriter) {
        guard let session = currentSession, session.isOwnersSender(writer) else { return }
        session.cancelThumbnails()
    }
}
