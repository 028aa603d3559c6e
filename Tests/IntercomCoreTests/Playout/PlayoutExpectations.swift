import IntercomCore
import Testing

/// Checks what must hold after any run that played everything it received.
func expectConsistentPlayout(
    _ log: [RenderedFrame],
    _ statistics: JitterBufferStatistics,
    sent: Int,
    network: NetworkRun,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let played = log.playedIndices
    // Strictly increasing: right order, and no frame played twice.
    #expect(zip(played, played.dropFirst()).allSatisfy { $0 < $1 }, "frames played out of order or twice", sourceLocation: sourceLocation)
    #expect(statistics.received == sent - network.lostIndices.count, sourceLocation: sourceLocation)
    #expect(statistics.received + statistics.lost == sent, sourceLocation: sourceLocation)
    #expect(statistics.duplicated == network.duplicates, sourceLocation: sourceLocation)
    #expect(log.decodedIndices.count == statistics.received - statistics.late, sourceLocation: sourceLocation)
    #expect(statistics.recoveredByFEC == log.recoveredCount, sourceLocation: sourceLocation)
    #expect(statistics.concealed == log.count(of: .concealed), sourceLocation: sourceLocation)
    #expect(Set(log.decodedIndices).isDisjoint(with: network.lostIndices), sourceLocation: sourceLocation)
}

/// Plays everything `network` delivered through `stream`, checks what must hold after any such
/// run (every pull filled, `expectConsistentPlayout`), and returns the stream's statistics.
func playOutAndCheck(
    _ stream: ReceiveStream, decoder: RecordingDecoder, sent: Int, network: NetworkRun,
    sourceLocation: SourceLocation = #_sourceLocation
) -> JitterBufferStatistics {
    let simulation = PlayoutSimulation()
    let pulls = simulation.pulls(toDrain: network.deliveries)
    let produced = simulation.run(stream, deliveries: network.deliveries, pulls: pulls)
    let statistics = stream.statistics
    expectConsistentPlayout(decoder.log, statistics, sent: sent, network: network, sourceLocation: sourceLocation)
    #expect(produced == pulls * simulation.pullSamples, sourceLocation: sourceLocation)
    return statistics
}

/// A stream whose decoder records what it played, and whose rate adjuster is the linear one.
func makeRecordingStream(_ configuration: JitterBufferConfiguration = JitterBufferConfiguration()) -> (ReceiveStream, RecordingDecoder) {
    let decoder = RecordingDecoder()
    return (ReceiveStream(configuration: configuration, decoder: decoder, rateAdjuster: LinearRateAdjuster()), decoder)
}

let millisecond: UInt64 = 1_000_000
let second: UInt64 = 1_000_000_000
