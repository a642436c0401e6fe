import Foundation

/// The theme files of this folder, bundled into the binary so they are found from any working
/// directory.
public enum BundledThemes {
    public static let names = ["default", "high-contrast", "light", "mono"]

    /// The file of a bundled theme, by name ("light") or file name ("light.toml").
    public static func url(named name: String) -> URL? {
        let base = name.hasSuffix(".toml") ? String(name.dropLast(5)) : name
        guard names.contains(base) else { return nil }
        return Bundle.module.url(forResource: base, withExtension: "toml")
    }
}
