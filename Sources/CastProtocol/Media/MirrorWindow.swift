/// The `--window` argument of `cast mirror` and `cast-mirror`.
public enum MirrorWindow {
    /// The X11 window id in `text`: hexadecimal with `0x` (as `xwininfo` and `wmctrl` write it) or decimal, 1 to
    /// 0x1FFFFFFF (X11 ids have 29 bits); nil for anything else.
    public static func id(_ text: String) -> UInt? {
        let value: UInt?
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            value = UInt(text.dropFirst(2), radix: 16)
        } else {
            value = UInt(text, radix: 10)
        }
        guard let value, (1...0x1FFF_FFFF).contains(value), text.count <= 12 else { return nil }
        return value
    }
}
