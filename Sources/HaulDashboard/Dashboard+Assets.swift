import HaulCore
import HaulCrypto

extension Dashboard {
    /// The embedded files by request path: each one's media type, entity tag and bytes.
    ///
    /// SwiftPM embeds every file of `Sources/HaulDashboard/Assets/` at build time
    /// (`resources: [.embedInCode("Assets")]` in Package.swift), as `PackageResources.<name>_<ext>`;
    /// a file added there is listed here too, and a test fails while the two differ. The table,
    /// and with it every entity tag, is made once, on first use.
    static let assets: [String: Asset] = [
        "/app.js": Asset(.javascript, PackageResources.app_js),
        "/chart.js": Asset(.javascript, PackageResources.chart_js),
        "/details.js": Asset(.javascript, PackageResources.details_js),
        "/dom.js": Asset(.javascript, PackageResources.dom_js),
        "/errors.js": Asset(.javascript, PackageResources.errors_js),
        "/favicon.svg": Asset(.svg, PackageResources.favicon_svg),
        "/format.js": Asset(.javascript, PackageResources.format_js),
        "/index.html": Asset(.html, PackageResources.index_html),
        "/rpc.js": Asset(.javascript, PackageResources.rpc_js),
        "/segments.js": Asset(.javascript, PackageResources.segments_js),
        "/selection.js": Asset(.javascript, PackageResources.selection_js),
        "/store.js": Asset(.javascript, PackageResources.store_js),
        "/style.css": Asset(.css, PackageResources.style_css),
        "/view.js": Asset(.javascript, PackageResources.view_js),
    ]

    /// One embedded file: its bytes, its media type, and a strong entity tag made from its bytes.
    struct Asset: Sendable {
        /// The media types of the dashboard's files, as `Content-Type` values with their charset.
        enum MediaType: String, Sendable {
            /// `.html`
            case html = "text/html; charset=utf-8"
            /// `.js`, loaded as modules.
            case javascript = "text/javascript; charset=utf-8"
            /// `.css`
            case css = "text/css; charset=utf-8"
            /// `.svg`
            case svg = "image/svg+xml; charset=utf-8"
        }

        /// The `Content-Type` value, with its charset.
        let contentType: String
        /// The quoted strong entity tag: the first 128 bits of the file's SHA-256, in hex.
        let entityTag: String
        /// The file's contents, as they are in the Assets folder.
        let body: [UInt8]

        /// An asset from the embedded bytes of one file; hashes them for its entity tag.
        ///
        /// - Parameters:
        ///   - type: the file's media type.
        ///   - body: the file's bytes.
        init(_ type: MediaType, _ body: [UInt8]) {
            self.contentType = type.rawValue
            self.entityTag = Self.entityTag(of: body)
            self.body = body
        }

        /// A strong entity tag for `bytes`: the first 16 bytes of their SHA-256 in lower-case
        /// hex, quoted (`"e47af1b8d4dadd02312e9f15812a1b09"`).
        ///
        /// - Parameter bytes: a file's contents.
        /// - Returns: the quoted tag, 34 characters.
        static func entityTag(of bytes: [UInt8]) -> String {
            "\"" + Hex.encode(Digest.hash(.sha256, bytes).prefix(16)) + "\""
        }
    }
}
