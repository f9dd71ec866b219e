internal import CFFmpeg

#if canImport(Glibc)
    import Glibc
#endif

/// A VA-API device opened through FFmpeg (`av_hwdevice_ctx_create`, DRM only: a render node such as
/// /dev/dri/renderD128, never an X11 display), held until the last encoder that uses it is gone. Opening it is the
/// first half of cast-mirror's VA-API probe; `VAAPIScreenEncoder` opening `h264_vaapi` on it is the second.
///
/// Thread-safety: immutable after init; FFmpeg's reference is released once, in deinit.
public final class VAAPIDevice {
    /// Where render nodes are looked for when no device is named.
    public static let renderNodes = "/dev/dri"
    /// The render node opened.
    public let path: String
    /// FFmpeg's device context (an `AVHWDeviceContext` of type VAAPI).
    let reference: UnsafeMutablePointer<AVBufferRef>

    /// Opens `path`, or when nil the first render node (`renderD*`, lowest number first) in `renderNodes`.
    /// - Throws: `MirrorError` with the reason in words: no render node, the path is not there, or FFmpeg's text
    ///   for why the device did not open.
    public init(path: String?, renderNodes: String = VAAPIDevice.renderNodes) throws(MirrorError) {
        guard let path = path ?? Self.firstRenderNode(in: renderNodes) else {
            throw MirrorError("no VA-API device: \(renderNodes) has no render node")
        }
        guard path.utf8.count <= 4096, path.hasPrefix("/"), !path.contains(where: \.isNewline) else {
            throw MirrorError("no VA-API device: a device is an absolute path, such as /dev/dri/renderD128")
        }
        guard access(path, F_OK) == 0 else { throw MirrorError("no VA-API device: \(path) does not exist") }
        guard av_hwdevice_find_type_by_name("vaapi") == AV_HWDEVICE_TYPE_VAAPI else {
            throw MirrorError("this FFmpeg was built without VA-API")
        }
        // DRM only: without it FFmpeg would also try `path` as an X11 display name.
        var options: OpaquePointer?
        av_dict_set(&options, "connection_type", "drm", 0)
        defer { av_dict_free(&options) }
        var device: UnsafeMutablePointer<AVBufferRef>?
        // FFmpeg frees what it allocated when this fails (the descriptor it opened included).
        let status = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, path, options, 0)
        guard status >= 0, let device else {
            throw MirrorError("VA-API device \(path) did not open: \(EncoderHandles.message(status))")
        }
        self.path = path
        self.reference = device
    }

    deinit {
        var reference: UnsafeMutablePointer<AVBufferRef>? = self.reference
        av_buffer_unref(&reference)
    }

    /// The render node with the lowest number in `directory` (renderD128 before renderD129); nil when there is none
    /// (no GPU, no /dev/dri, or a container without it).
    public static func firstRenderNode(in directory: String) -> String? {
        guard let folder = opendir(directory) else { return nil }
        defer { closedir(folder) }
        var best: (number: Int, name: String)?
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("renderD"), let number = Int(name.dropFirst(7)), number >= 0 else { continue }
            if best.map({ number < $0.number }) ?? true { best = (number, name) }
        }
        return best.map { directory + "/" + $0.name }
    }
}
