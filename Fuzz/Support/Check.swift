// Compiled into every fuzz target by scripts/fuzz.

/// Stops the target with `message` when a property does not hold.
///
/// Not `precondition`: in an optimised build it traps without its message,
/// and a fuzz target is built optimised; libFuzzer then keeps the input but
/// nobody learns which property failed.
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}

/// Stops the target with `message`: a property cannot hold.
func fail(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message(), file: file, line: line)
}
