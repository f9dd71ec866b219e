/// The wire ids of message types. Ids are never reused: a retired message keeps its number.
public enum MessageType: UInt8, Sendable, CaseIterable {
    /// Sender → receiver, first message on every connection.
    case hello = 1
    /// Receiver → sender, the answer to an accepted hello.
    case welcome = 2
    /// Sender → receiver: what are you doing?
    case statusRequest = 3
    /// Receiver → sender: the answer to `statusRequest`.
    case status = 4
    /// Either way: something failed; after a protocol violation the sender of `error` closes.
    case error = 5
    /// Sender → receiver: play this (`PlayRequest`).
    case play = 6
    /// Receiver → sender: the play request is accepted (`PlayAccepted`).
    case playAccepted = 7
    /// Receiver → sender: a playback event (`PlaybackEvent`), pushed as it happens.
    case event = 8
    /// Sender → receiver: pause, resume, stop (`PlaybackControl`).
    case control = 9
    /// Sender → receiver, first on a media connection (`MediaHello`).
    case mediaHello = 10
    /// Receiver → sender on a media connection (`MediaRead`).
    case mediaRead = 11
    /// Sender → receiver on a media connection (`MediaData`, binary).
    case mediaData = 12
    /// Sender → receiver: push me the events of whatever plays, now and later (`{}`).
    case watch = 13
    /// Sender → receiver: images of the media that plays, at given times (`ThumbnailRequest`).
    case thumbnailRequest = 14
    /// Sender → receiver: cancel every thumbnail request not answered yet (`{}`).
    case thumbnailCancel = 15
    /// Receiver → sender: part of an image, or an error, for one time of a request (`ThumbnailPart`).
    case thumbnail = 16
    /// Sender → receiver: the receiver's clock, please (`TimeRequest`).
    case timeRequest = 17
    /// Receiver → sender: the answer to `timeRequest`, stamped when it arrived and when it left (`TimeReply`).
    case timeReply = 18
    /// Sender → receiver: start pairing (`PairingStart`).
    case pairingStart = 30
    /// Receiver → sender: salt and B (`PairingChallenge`).
    case pairingChallenge = 31
    /// Sender → receiver: A and M1 (`PairingProof`).
    case pairingProof = 32
    /// Receiver → sender: M2 and the receiver's key (`PairingConfirmation`).
    case pairingConfirmation = 33
    /// Receiver → sender: pairing did not happen (`PairingFailure`).
    case pairingFailure = 34
    // 35...39: reserved for pairing.
}

extension MessageType {
    /// The message type of a pairing message (the same id).
    init(pairing type: PairingMessageType) {
        guard let value = MessageType(rawValue: type.rawValue) else {
            preconditionFailure("pairing ids are message ids")
        }
        self = value
    }
}
