import CastBase
public import CastProtocol

/// A receiver that plays alone becomes a group without stopping (docs/multiroom.md): what the driver does for
/// `GroupRules(adopting:)`.
extension GroupPlayback {
    /// Makes a group of what plays alone on `playback` (a Cast receiver that advertises `Features.anchor`), which
    /// plays on: it is neither stopped nor reloaded. The group measures its clock over its connection (the exchanges
    /// go beside its events), asks it where its playback is anchored (`anchor`) and makes that the group's timeline;
    /// receivers `add`ed then join that timeline in step, as a receiver joins any playing group. A receiver that does
    /// not answer in time is paused and resumed in step instead (a moment's pause). The group owns `playback` from
    /// here (its events are the group's); `snapshot` is what its events said so far. Returns once the timeline is
    /// known (within `GroupRules.Timing.anchorTimeout` and the clock's settling, about 2 s at most).
    /// - Throws: `CastError` `.connectionLost` when the receiver was lost meanwhile (the group is closed then).
    public static func adopt(
        _ playback: RemotePlayback, playing snapshot: PlaybackSnapshot, media: GroupMedia, configDirectory: String,
        reach: ReachingAny?, onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) throws(CastError) -> GroupPlayback {
        let clock = ClockProbe(
            exchanges: 8, estimator: ClockEstimator(window: clockWindow, minimumRateSpan: rateSpan))
        let name = printable(playback.receiverName)
        let arrival = GroupRules.Arrival(name: name, id: playback.welcomeID, clock: clock)
        let group = GroupPlayback(
            rules: GroupRules(adopting: arrival, playing: snapshot, canReach: reach != nil), playbacks: [0: playback],
            names: [name], media: media, configDirectory: configDirectory, reach: reach,
            onMemberChange: onMemberChange)
        group.startReader(0, playback)
        group.startTimer()
        do throws(CastError) {
            try group.perform { rules, ticket, now in rules.adopt(ticket: ticket, now: now) }
        } catch {
            group.close()
            throw error
        }
        return group
    }
}
