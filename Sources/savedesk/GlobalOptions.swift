import ArgumentParser

/// Options every operator command takes, named as the Stripe and RevenueCat CLIs name them.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The SaveDesk server URL (env SAVEDESK_SERVER; default http://127.0.0.1:8080).") var server: String?
    @Option(help: "An operator key, sk_test_… or sk_live_… (env SAVEDESK_KEY).") var key: String?
    @Option(help: "A profile of $XDG_CONFIG_HOME/savedesk/config.toml (env SAVEDESK_PROFILE).") var profile: String?
    @Flag(help: "Machine output (JSON) on stdout; messages go to stderr.") var json = false
    @Flag(name: .customLong("no-input"), help: "Fail instead of prompting.") var noInput = false
    @Flag(help: "Answer yes to every confirmation.") var yes = false
}
