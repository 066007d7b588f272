import Foundation

/// Runs `body` with a fresh, empty folder under the system's temporary directory, and removes
/// the folder and everything in it afterwards, however `body` ends.
///
/// Stops the test process if the folder cannot be created (the temporary directory is
/// unusable, so no test could run), which keeps the function `rethrows`.
///
/// - Parameter body: receives the folder's URL.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws.
public func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async rethrows -> T {
    let directory = makeTemporaryDirectoryOrDie()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// The synchronous variant of `withTemporaryDirectory(_:)`.
///
/// - Parameter body: receives the folder's URL.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws.
public func withTemporaryDirectory<T>(_ body: (URL) throws -> T) rethrows -> T {
    let directory = makeTemporaryDirectoryOrDie()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// The names of the entries of `dir`, sorted, not recursive (hidden files included).
///
/// - Parameter dir: a folder.
/// - Returns: the names, or `[]` when the folder cannot be read.
public func listFiles(_ dir: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
}

/// Creates `haul-test-<UUID>` in the temporary directory, with symlinks resolved so paths
/// compare equal to what the code under test reports (`/tmp` vs `/private/tmp` on macOS).
func makeTemporaryDirectory() throws -> URL {
    let base = FileManager.default.temporaryDirectory.resolvingSymlinksInPath()
    let directory = base.appendingPathComponent("haul-test-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
    return directory
}

private func makeTemporaryDirectoryOrDie() -> URL {
    do {
        return try makeTemporaryDirectory()
    } catch {
        fatalError("cannot create a temporary directory: \(error)")
    }
}
