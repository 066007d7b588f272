import HaulTestSupport
import Testing
@testable import Haul

@Suite struct MIMEExtensionsTests {
    @Test(arguments: [
        ("text/plain", "txt"),
        ("Text/Plain; charset=utf-8", "txt"),
        ("  application/json  ", "json"),
        ("application/json;charset=UTF-8", "json"),
        ("text/html; charset=iso-8859-1", "html"),
        ("application/xml", "xml"),
        ("text/xml", "xml"),
        ("application/pdf", "pdf"),
        ("IMAGE/JPEG", "jpg"),
        ("image/png", "png"),
        ("audio/mpeg", "mp3"),
        ("video/mp4", "mp4"),
        ("application/zip", "zip"),
        ("application/gzip", "gz"),
        ("application/x-gzip", "gz"),
        ("application/x-tar", "tar"),
        ("application/zstd", "zst"),
        ("application/x-7z-compressed", "7z"),
        ("application/wasm", "wasm"),
        ("font/woff2", "woff2"),
    ])
    func knownTypes(contentType: String, expected: String) {
        #expect(MIMEExtensions.fileExtension(forContentType: contentType) == expected)
    }

    @Test(arguments: [
        "application/octet-stream",
        "application/x-msdownload",
        "application/x-msi",
        "application/x-sh",
        "application/x-shellscript",
        "text/javascript",
        "application/javascript",
        "application/java-archive",
        "application/vnd.android.package-archive",
        "application/x-apple-diskimage",
        "application/vnd.debian.binary-package",
        "application/x-rpm",
        "image/svg+xml",
        "application/unknown",
        "text/plain-ish",
        "",
        ";charset=utf-8",
        "text/",
        "plain",
    ])
    func unsafeOrUnknownTypesGiveNil(contentType: String) {
        #expect(MIMEExtensions.fileExtension(forContentType: contentType) == nil)
    }

    @Test func noTableValueIsExecutable() {
        let executables: Set<String> = ["exe", "msi", "bat", "cmd", "com", "sh", "ps1", "js", "vbs", "jar",
                                        "apk", "app", "dmg", "deb", "rpm", "scr", "pif"]
        #expect(MIMEExtensions.executableExtensions.isSuperset(of: executables))
        for (type, ext) in MIMEExtensions.table {
            #expect(!executables.contains(ext.lowercased()), "\(type) maps to executable extension \(ext)")
        }
    }

    /// Every extension is one ``FileNameParts`` recognises, so it is kept when a name is shortened.
    @Test func everyTableValueIsAShortLowercaseExtension() {
        for (type, ext) in MIMEExtensions.table {
            #expect(type == type.lowercased())
            #expect(ext == ext.lowercased())
            #expect(FileNameParts("a.\(ext)").fileExtension == ext)
        }
    }
}
