/// Every transfer a pipeline has going, as one value: which handles share which transfer
/// (coalescing), each transfer's phase, the download queue and its slots.
///
/// Operations change the state and return what the pipeline must then do (look in the cache,
/// start a download, cancel a job, decode, complete handles); the pipeline calls them under its
/// lock and carries the actions out after releasing it, so no loader, callback or cancellation
/// handler runs under the lock (AsyncHTTPClient's state machines work the same way). No I/O here:
/// `Handle` is what the pipeline completes (its `ImageTask`), `Job` what it cancels (a running
/// download), `Stale` what a cache lookup hands to the download (an entry to revalidate); tests
/// use plain values.
///
/// A transfer goes: `lookingUp` (the cache stage reads the disk) → `queued` → `running` (holds a
/// download slot) → `decoding` → finished; a fresh disk entry goes from `lookingUp` straight to
/// `decoding`, a request with nothing to look up starts `queued`.
struct TransferStateMachine<Handle, Job, Stale> {
    typealias Priority = ImageRequest.Priority

    /// A handle's place in a transfer.
    struct Member {
        var handle: Handle
        /// The handle's own request: its variant, processors and options.
        var request: ImageRequest
        var priority: Priority
        var decodes: Bool
        var wantsPreviews: Bool
        /// Whether the handle joined a transfer another handle started.
        var joined = false
    }

    enum Phase {
        case lookingUp
        /// `token` tells the current queue entry from stale ones (see ``DownloadQueue``).
        case queued(token: UInt64, stale: Stale?)
        /// Holding a slot; `job` is nil until the pipeline has made it.
        case running(job: Job?)
        case decoding
    }

    struct Transfer {
        let id: UInt64
        let key: ImageRequest.TransferKey
        /// The request of the handle that created the transfer; it decides how the bytes are fetched.
        let request: ImageRequest
        var priority: Priority
        var phase: Phase
        private(set) var members: [UInt64: Member] = [:]
        /// Members per priority, so the transfer's priority is found without a pass over them.
        private var priorityCounts = [Int](repeating: 0, count: Priority.allCases.count)
        private var previewMembers = 0
        var preview = PreviewState()

        init(id: UInt64, key: ImageRequest.TransferKey, request: ImageRequest, priority: Priority, phase: Phase) {
            self.id = id
            self.key = key
            self.request = request
            self.priority = priority
            self.phase = phase
        }

        /// The highest priority among the handles, which the transfer runs at.
        var membersPriority: Priority {
            priorityCounts.lastIndex { $0 > 0 }.flatMap(Priority.init(rawValue:)) ?? priority
        }
        var wantsPreviews: Bool { previewMembers > 0 }

        mutating func add(_ member: Member, as handleID: UInt64) {
            remove(handleID)
            members[handleID] = member
            priorityCounts[member.priority.rawValue] += 1
            if member.wantsPreviews { previewMembers += 1 }
        }

        @discardableResult
        mutating func remove(_ handleID: UInt64) -> Member? {
            guard let member = members.removeValue(forKey: handleID) else { return nil }
            priorityCounts[member.priority.rawValue] -= 1
            if member.wantsPreviews { previewMembers -= 1 }
            return member
        }
    }

    /// Previews of a running transfer: whether one is being made, when the last was delivered.
    struct PreviewState {
        var isMaking = false
        /// Bytes arrived while a preview was being made: once it ends, make another, or a
        /// transfer that then pauses would never show its latest bytes.
        var missedBytes = false
        var last: ContinuousClock.Instant?
        var decoder: PreviewDecoder?
    }

    /// A download the pipeline must start: make its job, then call ``started(_:job:)``.
    struct Start {
        let transferID: UInt64
        let request: ImageRequest
        let priority: Priority
        let stale: Stale?
        /// Every member wants an image (none only the bytes): the source may be read by ranges.
        let decodesOnly: Bool
    }

    enum JoinAction {
        /// The handle joined a transfer already under way.
        case coalesced(transferID: UInt64)
        /// A new transfer: look in the cache stage, then call ``cacheHit(_:)`` or ``cacheMissed(_:stale:)``.
        case lookUp(transferID: UInt64, request: ImageRequest)
        /// A new transfer, queued; these downloads start now (none if every slot is taken).
        case start([Start])
    }

    /// What follows a transfer's bytes arriving.
    enum NextStep {
        /// Decode for these requests (the handles that want an image), then ``finish(_:)``.
        case decode(requests: [ImageRequest], priority: Priority)
        /// No handle wants an image, or the load failed: ``finish(_:)`` now.
        case finish
        /// Every handle left: nothing to deliver.
        case gone
    }

    /// A handle that was cancelled, and what stopped with it.
    struct Cancellation {
        var handle: Handle
        /// Set when the handle was the transfer's last: the transfer stopped.
        var stoppedRequest: ImageRequest?
        /// The running download to cancel.
        var job: Job?
    }

    private(set) var transfers: [UInt64: Transfer] = [:]
    private var transferByKey: [ImageRequest.TransferKey: UInt64] = [:]
    private var transferOfHandle: [UInt64: UInt64] = [:]
    private var queue: DownloadQueue
    /// Download slots held, by running transfers and by cancelled ones whose job has not returned.
    private(set) var running = 0
    /// Cache-stage lookups not yet answered, the transfer's own and handles' variant lookups.
    private(set) var lookups = 0
    let maxRunning: Int
    /// While true, no queued download starts; running ones go on.
    private(set) var isSuspended = false
    private var nextID: UInt64 = 0

    init(maxRunning: Int, order: ImagePipeline.ExecutionOrder) {
        self.maxRunning = max(1, maxRunning)
        self.queue = DownloadQueue(order: order)
    }

    /// No transfer, no download and no lookup under way, cancelled ones included.
    var isIdle: Bool { transfers.isEmpty && running == 0 && lookups == 0 }

    /// The members of `transferID` (the transfer's own dictionary, not a copy), or none when it is gone.
    func members(of transferID: UInt64) -> [UInt64: Member] {
        transfers[transferID]?.members ?? [:]
    }

    /// The job of `transferID` while its download runs.
    func job(of transferID: UInt64) -> Job? {
        guard case .running(let job) = transfers[transferID]?.phase else { return nil }
        return job
    }

    /// Whether a member of `transferID` wants previews.
    func wantsPreviews(_ transferID: UInt64) -> Bool {
        transfers[transferID]?.wantsPreviews ?? false
    }

    // MARK: - Handles

    /// Adds handle `handleID` to the transfer its request needs, making one when none is under way.
    /// `looksUp` says whether a new transfer first looks in the cache stage.
    mutating func join(
        _ handleID: UInt64, handle: Handle, request: ImageRequest, decodes: Bool, looksUp: Bool
    ) -> JoinAction {
        let member = Member(
            handle: handle, request: request, priority: request.priority, decodes: decodes,
            wantsPreviews: decodes && request.options.contains(.previews)
        )
        let key = request.transferKey
        if let transferID = transferByKey[key], transfers[transferID] != nil {
            var member = member
            member.joined = true
            transfers[transferID]?.add(member, as: handleID)
            transferOfHandle[handleID] = transferID
            reprioritize(transferID)
            return .coalesced(transferID: transferID)
        }
        let transferID = makeID()
        var transfer = Transfer(id: transferID, key: key, request: request, priority: request.priority, phase: .lookingUp)
        transfer.add(member, as: handleID)
        transfers[transferID] = transfer
        transferByKey[key] = transferID
        transferOfHandle[handleID] = transferID
        if looksUp {
            lookups += 1
            return .lookUp(transferID: transferID, request: request)
        }
        enqueue(transferID, stale: nil)
        return .start(startQueued())
    }

    /// Removes handle `handleID`; the transfer stops when it was the last. Nil when the handle is
    /// in no transfer (finished, or never joined).
    mutating func cancel(_ handleID: UInt64) -> Cancellation? {
        // In place: a copy of the transfer would copy its members on write.
        guard let transferID = transferOfHandle.removeValue(forKey: handleID),
            let member = transfers[transferID]?.remove(handleID),
            let transfer = transfers[transferID]
        else { return nil }
        guard transfer.members.isEmpty else {
            reprioritize(transferID)
            return Cancellation(handle: member.handle)
        }
        remove(transferID)
        // A queued entry is skipped when popped; a lookup or decode finishes unseen; a download's
        // slot is held until its job returns (``downloaded(_:succeeded:)``).
        var job: Job?
        if case .running(let running) = transfer.phase { job = running }
        return Cancellation(handle: member.handle, stoppedRequest: transfer.request, job: job)
    }

    /// Sets handle `handleID`'s priority; its transfer runs at its members' highest, and a queued
    /// one moves lanes at once.
    mutating func setPriority(_ priority: Priority, of handleID: UInt64) {
        guard let transferID = transferOfHandle[handleID], var member = transfers[transferID]?.members[handleID] else { return }
        member.priority = priority
        transfers[transferID]?.add(member, as: handleID)
        reprioritize(transferID)
    }

    // MARK: - Cache stage

    /// A handle's own lookup (its variant on disk) began; it joins a transfer only if it misses.
    mutating func beginLookup() { lookups += 1 }

    /// A handle's own lookup ended.
    mutating func endLookup() { lookups -= 1 }

    /// The cache answered `transferID` without a download (or failed it, as a
    /// `returnCacheDataDontLoad` miss does).
    mutating func cacheHit(_ transferID: UInt64, succeeded: Bool = true) -> NextStep {
        lookups -= 1
        return nextStep(transferID, succeeded: succeeded)
    }

    /// The cache has nothing servable for `transferID`: it queues, with the entry to revalidate.
    mutating func cacheMissed(_ transferID: UInt64, stale: Stale?) -> [Start] {
        lookups -= 1
        guard transfers[transferID] != nil else { return [] }
        enqueue(transferID, stale: stale)
        return startQueued()
    }

    // MARK: - Downloads

    /// The pipeline made `job` for a started download. Returns the job when it must be cancelled
    /// (every handle left before it was made), and whether bytes that arrived before it was made
    /// wait for a preview (the download runs as soon as its task exists, so progress can come first).
    mutating func started(_ transferID: UInt64, job: Job) -> (cancel: Job?, preview: Bool) {
        guard case .running(nil) = transfers[transferID]?.phase else {
            // Gone: cancel it. Already past running: it has returned, nothing to stop.
            return (transfers[transferID] == nil ? job : nil, false)
        }
        transfers[transferID]?.phase = .running(job: job)
        let missed = transfers[transferID]?.preview.missedBytes == true
        transfers[transferID]?.preview.missedBytes = false
        return (nil, missed)
    }

    /// A download's job returned: its slot is free, queued downloads start, and the transfer
    /// decodes or finishes.
    mutating func downloaded(_ transferID: UInt64, succeeded: Bool) -> (starts: [Start], next: NextStep) {
        running -= 1
        let next = nextStep(transferID, succeeded: succeeded)
        return (startQueued(), next)
    }

    /// Stops starting queued downloads (running ones go on) until ``resume()``.
    mutating func suspend() { isSuspended = true }

    /// Starts queued downloads again.
    mutating func resume() -> [Start] {
        isSuspended = false
        return startQueued()
    }

    // MARK: - Finishing

    /// Ends `transferID` and returns its handles to complete; nil when every handle left.
    mutating func finish(_ transferID: UInt64) -> [Member]? {
        guard let transfer = transfers[transferID] else { return nil }
        remove(transferID)
        for handleID in transfer.members.keys { transferOfHandle[handleID] = nil }
        return Array(transfer.members.values)
    }

    /// Ends every transfer, as if each handle were cancelled: the handles, the requests of the
    /// transfers stopped and the jobs to cancel.
    mutating func cancelAll() -> [Cancellation] {
        var cancellations: [Cancellation] = []
        for handleID in Array(transferOfHandle.keys) {
            if let cancellation = cancel(handleID) { cancellations.append(cancellation) }
        }
        return cancellations
    }

    // MARK: - Previews

    /// Begins a preview of running `transferID` when none is being made and `interval` has passed
    /// since the last: the decoder to use and the running job (which holds the bytes so far).
    mutating func beginPreview(
        _ transferID: UInt64, now: ContinuousClock.Instant, interval: Duration, newDecoder: @autoclosure () -> PreviewDecoder
    ) -> (PreviewDecoder, Job)? {
        if transfers[transferID]?.preview.isMaking == true {
            transfers[transferID]?.preview.missedBytes = true
            return nil
        }
        if case .running(nil) = transfers[transferID]?.phase {
            // Bytes before the job is recorded: `started` asks for the preview then.
            transfers[transferID]?.preview.missedBytes = true
            return nil
        }
        guard var transfer = transfers[transferID], transfer.wantsPreviews,
            case .running(let job?) = transfer.phase,
            transfer.preview.last.map({ now - $0 >= interval }) ?? true
        else { return nil }
        transfer.preview.isMaking = true
        transfer.preview.missedBytes = false
        let decoder = transfer.preview.decoder ?? newDecoder()
        transfers[transferID] = transfer
        return (decoder, job)
    }

    /// A preview ended; returns the members to give it to, only while the bytes are still
    /// arriving (a finished transfer delivers the image), and whether bytes arrived meanwhile, so
    /// that another preview should be tried.
    mutating func endPreview(
        _ transferID: UInt64, decoder: PreviewDecoder, made: Bool, now: ContinuousClock.Instant
    ) -> (members: [Member], again: Bool) {
        guard var transfer = transfers[transferID] else { return ([], false) }
        transfer.preview.isMaking = false
        transfer.preview.decoder = decoder
        if made { transfer.preview.last = now }
        let again = transfer.preview.missedBytes
        transfer.preview.missedBytes = false
        transfers[transferID] = transfer
        guard case .running = transfer.phase else { return ([], false) }
        return (made ? transfer.members.values.filter(\.wantsPreviews) : [], again)
    }

    // MARK: - Private

    private mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    private mutating func remove(_ transferID: UInt64) {
        guard let transfer = transfers.removeValue(forKey: transferID) else { return }
        if transferByKey[transfer.key] == transferID { transferByKey[transfer.key] = nil }
    }

    private mutating func enqueue(_ transferID: UInt64, stale: Stale?) {
        guard let priority = transfers[transferID]?.priority else { return }
        let token = makeID()
        transfers[transferID]?.phase = .queued(token: token, stale: stale)
        queue.push(.init(transferID: transferID, token: token), priority: priority)
    }

    /// The transfer decodes when it succeeded and a member wants an image; it stays joinable while
    /// it decodes, so a late request shares the decode.
    private mutating func nextStep(_ transferID: UInt64, succeeded: Bool) -> NextStep {
        guard let transfer = transfers[transferID] else { return .gone }
        let decoding = transfer.members.values.filter(\.decodes)
        guard succeeded, !decoding.isEmpty else { return .finish }
        transfers[transferID]?.phase = .decoding
        return .decode(requests: decoding.map(\.request), priority: transfer.priority)
    }

    /// Starts queued transfers while slots are free.
    private mutating func startQueued() -> [Start] {
        var starts: [Start] = []
        while !isSuspended, running < maxRunning {
            let entry = queue.pop { [transfers] entry in
                guard case .queued(let token, _) = transfers[entry.transferID]?.phase else { return false }
                return token == entry.token
            }
            guard let entry, let transfer = transfers[entry.transferID], case .queued(_, let stale) = transfer.phase else { break }
            transfers[entry.transferID]?.phase = .running(job: nil)
            running += 1
            starts.append(
                Start(
                    transferID: transfer.id, request: transfer.request, priority: transfer.priority, stale: stale,
                    decodesOnly: transfer.members.values.allSatisfy(\.decodes)))
        }
        return starts
    }

    /// Sets a transfer's priority to its members' highest; a queued one moves lanes at once.
    private mutating func reprioritize(_ transferID: UInt64) {
        guard let transfer = transfers[transferID] else { return }
        let priority = transfer.membersPriority
        guard priority != transfer.priority else { return }
        transfers[transferID]?.priority = priority
        if case .queued(_, let stale) = transfer.phase {
            let token = makeID()
            transfers[transferID]?.phase = .queued(token: token, stale: stale)
            queue.push(.init(transferID: transferID, token: token), priority: priority)
        }
    }
}

extension TransferStateMachine.Start: Sendable where Stale: Sendable {}
