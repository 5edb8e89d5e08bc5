import Testing
@testable import DAVServer

/// The header timeout's state machine, event by event, without I/O.
@Suite struct RequestHeadDeadlineTests {
    @Test("armed from the connection's start (the TLS handshake included) until the first head")
    func firstHead() {
        var deadline = RequestHeadDeadline()
        #expect(deadline.connected() == .arm)
        #expect(deadline.connected() == .none, "handlerAdded and channelActive both report the start: one timer")
        #expect(deadline.headRead() == .disarm)
        #expect(!deadline.isArmed)
    }

    @Test("silence times out with a bare close; part of a head with 408")
    func timeouts() {
        var silent = RequestHeadDeadline()
        _ = silent.connected()
        #expect(silent.timedOut() == .close)
        #expect(silent.timedOut() == .none, "once")

        var half = RequestHeadDeadline()
        _ = half.connected()
        #expect(half.bytesArrived() == .none, "already armed")
        #expect(half.timedOut() == .answerAndClose)
    }

    @Test("between requests the timer waits for the next head's first byte")
    func keepAlive() {
        var deadline = RequestHeadDeadline()
        _ = deadline.connected()
        _ = deadline.headRead()
        deadline.endRead()
        #expect(deadline.bytesArrived() == .none, "the read that carried the request")
        deadline.responseEnded()
        #expect(deadline.isBetweenRequests)
        #expect(!deadline.isArmed, "an idle kept-alive connection is the idle timeout's")
        #expect(deadline.bytesArrived() == .arm, "the next request's first bytes")
        #expect(deadline.headRead() == .disarm)
    }

    @Test("a body still arriving after an early answer does not start the timer, nor does the read that ends it")
    func earlyAnswer() {
        var deadline = RequestHeadDeadline()
        _ = deadline.connected()
        _ = deadline.headRead()
        deadline.responseEnded()  // 401 before the body was read
        #expect(!deadline.isBetweenRequests)
        #expect(deadline.bytesArrived() == .none, "body bytes")
        deadline.endRead()
        #expect(deadline.isBetweenRequests)
        #expect(deadline.bytesArrived() == .none, "the read that ended the body")
        #expect(deadline.bytesArrived() == .arm, "a later read is a next request")
    }

    @Test("a parse error is answered between requests, forwarded inside one, ignored once closed")
    func parseErrors() {
        var idle = RequestHeadDeadline()
        _ = idle.connected()
        #expect(idle.parseFailed() == .answerAndClose)
        #expect(idle.parseFailed() == .ignore)

        var inBody = RequestHeadDeadline()
        _ = inBody.connected()
        _ = inBody.headRead()
        #expect(inBody.parseFailed() == .forward, "the responder reading the body answers")

        var timedOut = RequestHeadDeadline()
        _ = timedOut.connected()
        _ = timedOut.timedOut()
        #expect(timedOut.parseFailed() == .ignore, "the cut-off head after our own close")
    }

    @Test("closing disarms, and nothing arms afterwards")
    func closing() {
        var deadline = RequestHeadDeadline()
        _ = deadline.connected()
        #expect(deadline.closed() == .disarm)
        #expect(deadline.bytesArrived() == .none)
        #expect(deadline.timedOut() == .none)
    }
}
