import CHaulSys
import HaulHTTP

/// Facts about the library itself and the build it came from.
public enum HaulInfo {
    /// The library version, sent in `User-Agent: haul/<version>`.
    public static let version = "0.1.0"

    /// The commit the library was built from, as the build named it, or `nil` when it did not.
    ///
    /// The build names it with `HAUL_COMMIT` in the environment of `swift build`
    /// (`Scripts/build-release.sh` sets it from git); a plain `swift build` names none.
    public static var commit: String? {
        haul_build_commit().map { String(cString: $0) }
    }

    /// The version of the Swift compiler that built the library: "6.3.1", or "6.3" for 6.3.0.
    public static var swiftVersion: String {
        swiftVersion(encoded: Int(haul_swift_compiler_version()))
    }

    /// The TLS library the process runs with, its name and version as the loaded library reports
    /// them ("OpenSSL 3.0.19").
    public static var tlsLibrary: String {
        TLSContext.libraryVersion
    }

    /// A compiler version encoded as major * 10000 + minor * 100 + patch, as text ("6.3.1",
    /// "6.3" when the patch is 0); "unknown" for 0.
    static func swiftVersion(encoded: Int) -> String {
        guard encoded > 0 else { return "unknown" }
        let (major, minor, patch) = (encoded / 10_000, encoded / 100 % 100, encoded % 100)
        return patch == 0 ? "\(major).\(minor)" : "\(major).\(minor).\(patch)"
    }
}
