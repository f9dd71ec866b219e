internal import CALSA
import Foundation

/// The ALSA PCMs this machine offers, for `castd --list-audio-devices` (what `aplay -L` lists).
public enum AudioDevices {
    /// One PCM: the name to pass to `--audio-device`, and ALSA's description.
    public struct Device: Sendable, Equatable {
        /// The PCM name, e.g. `default`, `hw:CARD=PCH,DEV=0`, `null`.
        public var name: String
        /// ALSA's description, possibly over several lines.
        public var description: String
    }

    /// Every output PCM from ALSA's name hints (`snd_device_name_hint`), in ALSA's order.
    public static func list() -> [Device] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [Device] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            func value(_ key: String) -> String? {
                guard let text = snd_device_name_get_hint(hint, key) else { return nil }
                defer { free(text) }
                return String(cString: text)
            }
            // IOID is absent for devices that do both; "Input" ones cannot play.
            guard let name = value("NAME"), value("IOID") != "Input" else { continue }
            devices.append(Device(name: name, description: value("DESC") ?? ""))
        }
        return devices
    }
}
