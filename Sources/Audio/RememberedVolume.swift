internal import CPulse

/// Puts back the volume a sound server remembers for a group of streams (one application, one media role),
/// through the stream-restore extension of the native protocol (`pulse/ext-stream-restore.h`).
///
/// Both servers remember the last volume a client set on a stream and give it to the group's next stream:
/// PulseAudio's `module-stream-restore` (entries named by the stream's `module-stream-restore.id` property,
/// e.g. `sink-input-by-application-name:Music`) and WirePlumber's `restore-stream.lua` (state file
/// `$XDG_STATE_HOME/wireplumber/restore-stream`, keys such as `Output/Audio:application.name:Music`), which
/// pipewire-pulse serves through the same extension: a write becomes the `route-settings` metadata key
/// `restore.stream.Output/Audio.application.name:Music`, which WirePlumber stores. Source: PulseAudio 16
/// `module-stream-restore.c`; PipeWire 0.3.65 `module-protocol-pulse/extensions/ext-stream-restore.c`;
/// WirePlumber 0.4.13 `scripts/restore-stream.lua` (`handleRouteSettings`).
///
/// The `Ducker` uses it where it had to lower a stream's own volume (no server-side ducking) and that stream
/// ended while lowered: the lowered volume was remembered for its group, and is replaced by the one it had.
enum RememberedVolume {
    /// Replaces the remembered volume of the group `name` by `volume` (per channel, in `channelMap`'s order),
    /// keeping the entry's device and mute when the server lists the entry (PulseAudio does; pipewire-pulse
    /// lists only what was written through the extension), else with `mute`. `completion` runs on the main
    /// loop once the server has answered (also when it has no such extension).
    static func put(
        _ name: String, volume: [UInt32], channelMap: pa_channel_map, mute: Bool, on ctx: OpaquePointer,
        completion: @escaping () -> Void
    ) {
        let request = Request(name: name, volume: volume, channelMap: channelMap, mute: mute, completion: completion)
        let box = Unmanaged.passRetained(request).toOpaque()
        let op = pa_ext_stream_restore_read(ctx, { ctx, info, eol, box in
            guard let box else { return }
            let r = Unmanaged<Request>.fromOpaque(box)
            if eol == 0 {
                guard let info, let entryName = info.pointee.name else { return }
                let request = r.takeUnretainedValue()
                if String(cString: entryName) == request.name {
                    request.device = info.pointee.device.map { String(cString: $0) }
                    request.mute = info.pointee.mute != 0
                }
                return
            }
            let request = r.takeRetainedValue()
            guard eol > 0, let ctx else { return request.completion() }   // no extension: nothing remembered
            request.write(on: ctx)
        }, box)
        if let op { pa_operation_unref(op) } else {
            Unmanaged<Request>.fromOpaque(box).release()
            completion()
        }
    }
}

private final class Request {
    let name: String
    let volume: [UInt32]
    let channelMap: pa_channel_map
    var mute: Bool
    var device: String?
    let completion: () -> Void

    init(name: String, volume: [UInt32], channelMap: pa_channel_map, mute: Bool, completion: @escaping () -> Void) {
        self.name = name
        self.volume = volume
        self.channelMap = channelMap
        self.mute = mute
        self.completion = completion
    }

    func write(on ctx: OpaquePointer) {
        var info = pa_ext_stream_restore_info()
        info.channel_map = channelMap
        info.volume.channels = UInt8(min(volume.count, Int(PA_CHANNELS_MAX)))
        withUnsafeMutableBytes(of: &info.volume.values) { raw in
            let values = raw.bindMemory(to: pa_volume_t.self)
            for (i, v) in volume.prefix(values.count).enumerated() { values[i] = v }
        }
        info.mute = mute ? 1 : 0
        let box = Unmanaged.passRetained(self).toOpaque()
        let op: OpaquePointer? = name.withCString { cName in
            withOptionalCString(device) { cDevice in
                info.name = cName
                info.device = cDevice
                // Not applied to running streams: only what the group's next stream starts with changes.
                return pa_ext_stream_restore_write(ctx, PA_UPDATE_REPLACE, &info, 1, 0, { _, _, box in
                    guard let box else { return }
                    Unmanaged<Request>.fromOpaque(box).takeRetainedValue().completion()
                }, box)
            }
        }
        if let op { pa_operation_unref(op) } else {
            Unmanaged<Request>.fromOpaque(box).release()
            completion()
        }
    }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
