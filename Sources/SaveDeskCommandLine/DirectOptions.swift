/// The values of a command line made only of these options, each at most once, as `--name value`
/// or `--name=value`; nil for anything else (another argument, an option given twice or without
/// its value, a value that starts with "-", `--help`), which the caller hands to ArgumentParser.
///
/// For a command whose options are all single optional values and whose start is timed
/// (`savedesk tui`): ArgumentParser reflects the command and its built-in flags before it parses,
/// and each type it meets is looked up among every protocol conformance of the binary (about
/// 12,000): 2–3 ms of the console's start. Whatever this does not take, ArgumentParser reads (and
/// answers) as before, so its help and its errors stay the only ones. The arguments are an array,
/// not any collection: a generic function another module calls runs unspecialized, and the types
/// it uses are made at run time, with more of those scans.
public func directOptions(_ arguments: [String], names: [String]) -> [String: String]? {
    var values: [String: String] = [:]
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        guard argument.hasPrefix("--") else { return nil }
        let option = argument.dropFirst(2)
        let name: Substring, value: String
        if let equals = option.firstIndex(of: "=") {
            name = option[..<equals]
            value = String(option[option.index(after: equals)...])
        } else {
            guard let next = rest.popFirst() else { return nil }
            name = option
            value = next
        }
        guard names.contains(String(name)), values[String(name)] == nil, !value.hasPrefix("-") else { return nil }
        values[String(name)] = value
    }
    return values
}
