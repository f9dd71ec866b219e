/// What cast-mirror's loop asks of the encoder of the screen's pictures, whichever runs: libx264 (`ScreenEncoder`) or
/// the GPU's through VA-API (`VAAPIScreenEncoder`). `MirrorEncoderChoice.open` picks one.
///
/// Thread-safety: one thread uses an encoder.
public protocol PictureEncoder: AnyObject {
    /// The FFmpeg encoder's name, for people: `libx264` or `h264_vaapi`.
    var name: String { get }
    /// The bit rate asked of the encoder now, bits per second.
    var bitRate: Int { get }
    /// Whether pictures may take a quarter of a second at the bit rate rather than a frame's time.
    var isRelaxed: Bool { get }
    /// The quantiser of the last picture that came out (lower is sharper); nil when the encoder does not say.
    var lastQuantiser: Int? { get }
    /// Starts the stream afresh with the next picture (a key picture, a fresh rate control).
    func restart(relaxed: Bool) throws(MirrorError)
    /// Asks for `bitRate` bits per second from the next picture on.
    func setBitRate(_ bitRate: Int, relaxed: Bool) throws(MirrorError)
    /// Encodes the BGRX picture at `pixels` (`stride` bytes a row, the size given when opened) captured at
    /// `captured` (microseconds) and hands each access unit that comes out to `unit`.
    func encode(
        _ pixels: UnsafeRawPointer, stride: Int, captured: UInt64, _ unit: (UnsafeRawBufferPointer) throws -> Void
    ) throws
}

/// Which encoder `cast mirror --encoder` asks for, and the rule that turns it and the VA-API probe into the one that
/// runs. `auto`: VA-API when the machine has it, otherwise libx264 with a note that says why; `software`: libx264, no
/// probe; `vaapi`: VA-API, or a refusal with the reason (`cast mirror` exits 2: not on this machine).
public enum MirrorEncoderChoice: Sendable, Equatable {
    /// Encode with `kind`; `note` says why it is not the GPU's when `auto` fell back.
    case use(Kind, note: String?)
    /// The encoder asked for cannot run here: why.
    case refuse(String)

    /// What the user asks for (`--encoder`).
    public enum Preference: String, Sendable, CaseIterable {
        case auto
        case software
        case vaapi
    }

    /// The encoders cast-mirror has, by FFmpeg's name.
    public enum Kind: String, Sendable {
        case software = "libx264"
        case vaapi = "h264_vaapi"
    }

    /// The rule, pure: `probe` is called for `auto` and `vaapi` only and says why VA-API cannot run (nil: it can).
    public static func choose(_ preference: Preference, probe: () -> String?) -> MirrorEncoderChoice {
        if preference == .software { return .use(.software, note: nil) }
        guard let reason = probe() else { return .use(.vaapi, note: nil) }
        if preference == .vaapi { return .refuse("--encoder vaapi: \(reason)") }
        return .use(.software, note: "VA-API is not used (\(reason)): encoding with libx264")
    }

    /// Opens the encoder `preference` asks for, for `width`×`height` pictures at about `fps` a second from
    /// `bitRate` bits per second. VA-API on `device` (nil: the first render node in `renderNodes`), probed by opening
    /// it (`VAAPIProbe`, bounded in time): the probe's encoder is the one returned. The note is `auto`'s reason for
    /// libx264.
    /// - Throws: `MirrorError` (`isUsage`) when `vaapi` is asked for and cannot run, or when libx264 fails to open.
    public static func open(
        _ preference: Preference, device: String?, renderNodes: String = VAAPIDevice.renderNodes, width: Int,
        height: Int, fps: Int, bitRate: Int
    ) throws(MirrorError) -> (encoder: any PictureEncoder, note: String?) {
        var opened: VAAPIScreenEncoder?
        let choice = choose(preference) {
            switch VAAPIProbe.open(
                device: device, renderNodes: renderNodes, width: width, height: height, fps: fps, bitRate: bitRate)
            {
            case .success(let encoder):
                opened = encoder
                return nil
            case .failure(let error): return error.description
            }
        }
        switch choice {
        case .refuse(let reason): throw MirrorError(reason, usage: true)
        case .use(.vaapi, _):
            guard let opened else { throw MirrorError("VA-API opened but no encoder came of it") }
            return (opened, nil)
        case .use(.software, let note):
            return (try ScreenEncoder(width: width, height: height, fps: fps, bitRate: bitRate), note)
        }
    }

    /// An encoder of the same kind as `encoder` for pictures of a new size (the screen's or window's changed); libx264
    /// with a note that says why when VA-API does not take the new size (larger than the GPU encodes).
    public static func reopen(
        like encoder: any PictureEncoder, width: Int, height: Int, fps: Int, bitRate: Int
    ) throws(MirrorError) -> (encoder: any PictureEncoder, note: String?) {
        var note: String?
        if let vaapi = encoder as? VAAPIScreenEncoder {
            do {
                return (
                    try VAAPIScreenEncoder(
                        device: vaapi.device, width: width, height: height, fps: fps, bitRate: bitRate), nil
                )
            } catch {
                note = "VA-API does not take \(width)x\(height) (\(error)): encoding with libx264"
            }
        }
        return (try ScreenEncoder(width: width, height: height, fps: fps, bitRate: bitRate), note)
    }
}
