/// When a connection must have delivered a complete request head, as a value
/// type: events in, actions out, no I/O (`RequestHeadGuard` carries the
/// actions out on the channel).
///
/// The deadline runs from the moment the connection is accepted (so it covers
/// the TLS handshake too) until the first request head is parsed, and again
/// from the first byte of each later request on a kept-alive connection until
/// its head is parsed. Between requests (nothing sent yet) and while a request
/// is being read or answered it does not run: the idle timeout governs those,
/// and a next head whose first bytes came in the same read as the end of the
/// previous request's body (this layer cannot tell those bytes apart).
/// A slow client (slowloris) thus holds a connection for at most the header
/// timeout per request head, however slowly it drips its bytes.
///
/// A parse error with no request in flight is answered here, precisely and
/// once; one inside a request (a broken chunked body) belongs to the
/// responder reading that body.
struct RequestHeadDeadline {
    /// Request heads parsed, request ends parsed and responses finished on
    /// this connection. The connection is between requests when all three are
    /// equal (HTTP/1.1 answers in order, one response per request).
    private var headsRead = 0
    private var endsRead = 0
    private var responsesEnded = 0
    /// The deadline is armed: a head is expected and the timer runs.
    private(set) var isArmed = false
    /// Bytes of the awaited head have arrived (a half-sent head, not silence).
    private(set) var bytesSeen = false
    private var isClosed = false
    /// The current read finished a request's body.
    private var endedInThisRead = false

    enum Action: Equatable {
        /// Start the timer (none is running).
        case arm
        /// Cancel the running timer.
        case disarm
        case none
    }

    enum TimeoutAction: Equatable {
        /// Part of a head arrived: answer `408 Request Timeout`, then close.
        case answerAndClose
        /// Nothing arrived (an idle connection or an unfinished TLS
        /// handshake): close without a word.
        case close
        case none
    }

    enum ErrorAction: Equatable {
        /// No request is in flight: answer the error, then close.
        case answerAndClose
        /// A request is being read: its responder meets the error in the
        /// body and answers it.
        case forward
        /// The connection was already closed here (a timeout, an answered
        /// error); the decoder's complaint about the cut-off rest is moot.
        case ignore
    }

    /// Every request read so far is answered and no body is being read.
    var isBetweenRequests: Bool {
        headsRead == endsRead && endsRead == responsesEnded
    }

    /// The connection was accepted.
    mutating func connected() -> Action {
        guard !isClosed, !isArmed, isBetweenRequests else { return .none }
        isArmed = true
        bytesSeen = false
        return .arm
    }

    /// Plaintext bytes arrived (a read completed after TLS).
    mutating func bytesArrived() -> Action {
        defer { endedInThisRead = false }
        guard !isClosed else { return .none }
        if isArmed {
            bytesSeen = true
            return .none
        }
        // A read that finished the last request's body (answered early, say
        // 401 to a PUT) brought that body's bytes; whether a next head began
        // in them is not known here, so the idle timeout governs.
        guard isBetweenRequests, !endedInThisRead else { return .none }
        isArmed = true
        bytesSeen = true
        return .arm
    }

    /// A request head was parsed.
    mutating func headRead() -> Action {
        headsRead += 1
        guard isArmed else { return .none }
        isArmed = false
        return .disarm
    }

    /// A request's end (after its body) was parsed.
    mutating func endRead() {
        endsRead += 1
        endedInThisRead = true
    }

    /// A response's end was written.
    mutating func responseEnded() {
        responsesEnded += 1
    }

    /// The timer fired.
    mutating func timedOut() -> TimeoutAction {
        guard isArmed, !isClosed else { return .none }
        isArmed = false
        isClosed = true
        return bytesSeen ? .answerAndClose : .close
    }

    /// The HTTP decoder failed.
    mutating func parseFailed() -> ErrorAction {
        guard isBetweenRequests else { return .forward }
        guard !isClosed else { return .ignore }
        isClosed = true
        return .answerAndClose
    }

    /// The connection closed.
    mutating func closed() -> Action {
        isClosed = true
        guard isArmed else { return .none }
        isArmed = false
        return .disarm
    }
}
