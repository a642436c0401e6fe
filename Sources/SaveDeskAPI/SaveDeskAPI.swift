// SaveDeskAPI: `openapi.yaml` is the contract between client and server. The
// swift-openapi-generator build plugin generates `Components`, `Operations`, `Client` and
// `APIProtocol` from it at build time; nothing generated is committed.
import Foundation

/// The contract itself, shipped with the module: the server reads each operation's audience and
/// limits from it (one place for those rules).
public enum SaveDeskAPIResources {
    public static var specURL: URL? { Bundle.module.url(forResource: "openapi", withExtension: "yaml") }
}
