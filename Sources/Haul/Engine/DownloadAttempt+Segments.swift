import HaulHTTP

/// What kind of transfer a first response calls for.
struct TransferShape {
    /// The file's length, when known.
    let total: Int64?
    /// Bytes already on disk (a resume).
    let resumedFrom: Int64
    /// A length, ranges and a validator: segments, records and resume.
    let resumable: Bool
    /// The whole body came with the head (a small file on a fast link): it is written straight
    /// from the receive buffer, with no record, checkpoints, block hashes or segment plan. Only
    /// a body of the file's whole length (a 206 that holds less, from a server that caps its
    /// ranges, goes on with the segments, which ask for the rest), and not under a rate limit,
    /// which may hold the bytes back for a while. A pause or cancel that comes while such a body
    /// is written lets the download end, as one during the commit does.
    let wholeBodyHere: Bool

    init(_ file: DownloadAttempt.FileToWrite, exchange: HTTPExchange, limited: Bool) {
        let facts = file.facts
        total = file.record?.totalLength ?? facts.totalLength
        resumedFrom = file.record?.completed.byteCount ?? 0
        let validator = file.record.flatMap { $0.etag ?? $0.lastModified } ?? facts.strongETag ?? facts.lastModified
        if file.record == nil, !limited, exchange.bodyIsBuffered, let total,
           case .length(let length)? = exchange.framing, length == total {
            wholeBodyHere = true
        } else {
            wholeBodyHere = false
        }
        resumable = total != nil && facts.acceptsRanges && validator != nil && !wholeBodyHere
    }
}

extension DownloadAttempt {
    /// The segmented transfer of a resumable file, with the record it keeps (first written at the
    /// first checkpoint: a download that ends sooner never pays for it, and a crash before it
    /// just starts over).
    func segmentedTransfer(_ file: FileToWrite, exchange: HTTPExchange, progress: ProgressReporter,
                           hasher: StreamHasher?) throws(DownloadError) -> SegmentedTransfer? {
        let facts = file.facts
        guard let total = file.record?.totalLength ?? facts.totalLength else { return nil }
        try job.request.pieces?.check(total: total)
        let shownURL = url.description
        let shownFinalURL = exchange.finalURL == url ? shownURL : exchange.finalURL.description
        var template = file.record ?? ResumeRecord(url: url, finalURL: exchange.finalURL, etagHeader: facts.strongETag,
                                                   lastModified: facts.lastModified, totalLength: total, shownURL: shownURL,
                                                   shownFinalURL: shownFinalURL, resourceKey: file.resourceKey)
        template.redactedFinalURL = shownFinalURL
        template.serverDigest = file.verification?.serverDigest?.description
        let connections = job.request.connections ?? configuration.connectionsPerDownload
        let writesDirect = try writesPastThePageCache(file.partial, total: total, hasher: hasher)
        let (folder, name, control) = (self.folder, file.name, job.control)
        let validator = job.request.pieces != nil ? nil : resumeValidator(file.record) ?? facts.strongETag ?? facts.lastModified
        let setup = SegmentedTransfer.Setup(
            context: context, partial: file.partial, progress: progress, total: total, ifRange: validator,
            limiter: limiter, hostSlots: job.resources.hostSlots,
            checkpoint: { [template] (completed, pieces, verified, savedBefore) throws(DownloadError) in
                var record = template
                record.completed = ByteRangeSet(completed)
                record.blockHashes = pieces
                record.verifiedPieces = ByteRangeSet(verified)
                try record.save(for: name, in: folder, fieldsChecked: savedBefore)
                control.publish(completed: completed)
            }, sources: segmentSources(exchange), firstSource: firstSource, setAsideFirst: setAsideFirst,
            pieceChecksums: job.request.pieces,
            verifiedPieces: template.verifiedPieces.ranges, warn: { [events] in events.yield(.warning($0)) }, hasher: hasher,
            pieces: file.pieces.all, writesDirect: writesDirect)
        return SegmentedTransfer(setup: setup, completed: template.completed.ranges, connections: connections)
    }

    /// The sources of the segments: the attempt's, then the mirrors its first response names
    /// (`Link: <…>; rel=duplicate`, RFC 6249: https never downgraded to http, see
    /// ``DuplicateLinks``), up to ``Downloader/Configuration/maximumSources`` in all. The links
    /// left out are reported in one warning.
    private func segmentSources(_ exchange: HTTPExchange) -> [SignedSource] {
        var sources = self.sources
        let field = exchange.head.headers.values(for: "Link")
        guard configuration.usesLinkedMirrors, !field.isEmpty, sources.count < configuration.maximumSources else { return sources }
        let links = DuplicateLinks(fieldValues: field, responseURL: exchange.finalURL)
        if let first = links.dropped.first {
            events.yield(.warning(links.dropped.count == 1 ? "\(first)" : "\(first) (and \(links.dropped.count - 1) more links ignored)"))
        }
        var known = Set(sources.map(\.base.stringWithoutUserinfo))
        for mirror in links.mirrors where sources.count < configuration.maximumSources && known.insert(mirror.url.stringWithoutUserinfo).inserted {
            sources.append(SignedSource(linked: mirror.url, warn: { [events] in events.yield(.warning($0)) }))
        }
        return sources
    }

    /// Whether the connections write whole blocks past the page cache (``WritePath``). Such a
    /// file gets its blocks reserved first (direct writes into reserved blocks are faster than
    /// into a growing file), and its hasher, if any, takes the bytes from a window in memory
    /// (``StreamHasher/readPastCache(_:window:)``).
    private func writesPastThePageCache(_ partial: PartialFile, total: Int64, hasher: StreamHasher?) throws(DownloadError) -> Bool {
        // A small file never opens the second descriptor: it is cached anyway.
        let path = WritePath.choose(size: total, rateLimited: limiter != nil, minimumSegment: configuration.minimumSegmentSize,
                                    directWrites: total > BatchCommitter.largestFile && partial.directDescriptor() != nil)
        guard path == .direct else { return false }
        try partial.reserve(length: total)
        if let descriptor = partial.directDescriptor() { hasher?.readPastCache(descriptor) }
        return true
    }
}
