import Foundation
import TOMLKit

/// Where a command connects and keeps its state. Each value comes from the flag, else the
/// environment, else the profile in `$XDG_CONFIG_HOME/savedesk/config.toml`:
///
/// ```toml
/// default_profile = "demo"
/// [profiles.demo]
/// server = "http://127.0.0.1:8080"
/// key = "sk_test_…"
/// ```
struct CLISettings {
    var serverURL: URL
    var key: String
    /// The outbox of fire-and-forget calls and other local state.
    var dataDirectory: URL

    static let defaultServer = "http://127.0.0.1:8080"

    static func resolve(_ options: GlobalOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIError) -> CLISettings {
        try resolve(server: options.server, key: options.key, profile: options.profile, environment: environment)
    }

    static func resolve(
        server serverFlag: String?, key keyFlag: String?, profile profileFlag: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(CLIError) -> CLISettings {
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        let configHome = environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) } ?? home.appendingPathComponent(".config")
        let file = environment["SAVEDESK_CONFIG"].map { URL(fileURLWithPath: $0) }
            ?? configHome.appendingPathComponent("savedesk/config.toml")
        let profiles = try ProfileFile.load(file)
        let chosen = profileFlag ?? environment["SAVEDESK_PROFILE"]
        let name = chosen ?? profiles.defaultProfile ?? "default"
        let profile = profiles.profiles[name]
        if let chosen, profile == nil {
            let known = profiles.profiles.keys.sorted()
            throw .usage("no profile \"\(chosen)\" in \(file.path)" + (known.isEmpty ? "" : " (profiles: \(known.joined(separator: ", ")))"))
        }
        let server = serverFlag ?? environment["SAVEDESK_SERVER"] ?? profile?.server ?? defaultServer
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw .usage("the server must be an http(s) URL, got \"\(server)\"")
        }
        guard let key = keyFlag ?? environment["SAVEDESK_KEY"] ?? profile?.key, !key.isEmpty else {
            throw CLIError(message: "no API key: pass --key, set SAVEDESK_KEY, or add key to profile \"\(name)\" in \(file.path)", code: .auth)
        }
        let stateHome = environment["XDG_STATE_HOME"].map { URL(fileURLWithPath: $0) } ?? home.appendingPathComponent(".local/state")
        let data = environment["SAVEDESK_DATA_DIR"].map { URL(fileURLWithPath: $0) } ?? stateHome.appendingPathComponent("savedesk")
        return CLISettings(serverURL: url, key: key, dataDirectory: data)
    }
}

/// The profiles file. A key it does not know is an error naming that key.
struct ProfileFile {
    struct Profile: Equatable {
        var server: String?
        var key: String?
    }

    var defaultProfile: String?
    var profiles: [String: Profile] = [:]

    static func load(_ file: URL) throws(CLIError) -> ProfileFile {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return ProfileFile() }
        // It holds keys: say so when others can read it (once per command, on stderr).
        var info = stat()
        if stat(file.path, &info) == 0, info.st_mode & 0o077 != 0 {
            FileHandle.standardError.write(Data(
                "warning: \(file.path) holds API keys and can be read by other users; run chmod 600 \(file.path)\n".utf8))
        }
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch {
            throw .usage("\(file.path) is not valid TOML: \(error)")
        }
        var result = ProfileFile()
        for (key, value) in table {
            switch key {
            case "default_profile":
                guard let name = value.string else { throw .usage("\(file.path): default_profile must be text") }
                result.defaultProfile = name
            case "profiles":
                guard let profiles = value.table else { throw .usage("\(file.path): profiles must be a table of [profiles.NAME]") }
                for (name, entry) in profiles {
                    guard let entry = entry.table else { throw .usage("\(file.path): profiles.\(name) must be a table") }
                    var profile = Profile()
                    for (field, value) in entry {
                        switch field {
                        case "server", "key":
                            guard let text = value.string else { throw .usage("\(file.path): profiles.\(name).\(field) must be text") }
                            if field == "server" { profile.server = text } else { profile.key = text }
                        default:
                            throw .usage("\(file.path): unknown key profiles.\(name).\(field) (a profile has server and key)")
                        }
                    }
                    result.profiles[name] = profile
                }
            default:
                throw .usage("\(file.path): unknown key \(key) (expected default_profile or [profiles.NAME])")
            }
        }
        return result
    }
}
