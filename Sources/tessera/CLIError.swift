/// A command-line mistake or failure, printed as `tessera: <message>`.
struct CLIError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
