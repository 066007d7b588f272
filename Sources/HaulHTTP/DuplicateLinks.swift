import HaulCore
/// The other sources of a file that a response names in its `Link` fields (RFC 6249 §3–4): the
/// mirrors (`rel=duplicate`) to fetch from, best first, and the Metalink description
/// (`rel=describedby; type="application/metalink4+xml"`), each checked so that no link can make
/// the download less safe than the response it came with.
///
/// A mirror is kept when its target is http or https (never http when the response's URL is
/// https), is not the response's own URL nor an earlier mirror again, names no user or password,
/// and has no `anchor` naming another resource. The kept ones are ordered `pref` first, then by
/// `pri` (1 to 999999, lower first; missing or invalid counts as 999999), then by their order in
/// the fields; at most ``maximumMirrorCount`` stay. The Metalink description is the first
/// `describedby` link of the Metalink media type that passes the same checks of scheme,
/// credentials and anchor. Every link left out is in ``dropped`` with its reason.
package struct DuplicateLinks: Sendable, Hashable {
    /// The most mirrors kept: the best ones after ordering.
    package static let maximumMirrorCount = 10
    /// The priorities RFC 6249 §3.1 allows, lower first.
    package static let priorities = 1...999_999
    /// The priority of a mirror whose `pri` is missing or invalid: the last.
    package static let defaultPriority = 999_999
    /// The media type of a Metalink 4 description (RFC 5854).
    package static let metalinkMediaType = "application/metalink4+xml"

    /// A mirror: another URL with the same bytes.
    package struct Mirror: Sendable, Hashable {
        /// The mirror's URL, without userinfo.
        package var url: HTTPURL
        /// `pri`: 1 to 999999, lower first.
        package var priority: Int
        /// `pref`: the server prefers it.
        package var isPreferred: Bool
        /// `geo`: the ISO 3166-1 alpha-2 country code, lowercased, for display.
        package var country: String?
        /// `depth`: how many path segments, counted from the end, the mirror keeps as the origin
        /// lays them out.
        package var depth: Int?
    }

    /// A link left out, for a one-line warning.
    package struct Dropped: Sendable, Hashable, CustomStringConvertible {
        /// Why a link was left out.
        package enum Reason: Sendable, Hashable {
            /// Its link-value is malformed.
            case malformed
            /// Its target is not http or https.
            case unsupportedScheme
            /// Its target is not a valid URL.
            case invalidURL
            /// Its `anchor` says it is about another resource.
            case otherContext
            /// Its target names a user or password.
            case credentials
            /// Its target is http while the response's URL is https.
            case downgrade
            /// Its target is the response's own URL.
            case sameAsResponse
            /// Its target repeats an earlier mirror.
            case repeated
            /// It came after the first ``DuplicateLinks/maximumMirrorCount`` mirrors.
            case beyondLimit
        }

        /// Whether it is a mirror (otherwise a Metalink description).
        package var isMirror: Bool
        /// Where the link-value stands among all the link-values of the fields, from 0.
        package var position: Int
        /// The target, redacted (no userinfo, secret query values replaced), at most ~200 bytes.
        package var url: String
        /// Why it was left out.
        package var reason: Reason

        /// `mirror https://b.example/f ignored: http under an https download (never downgraded)`.
        package var description: String {
            "\(isMirror ? "mirror" : "Metalink description") \(url) ignored: \(Self.text(reason))"
        }

        /// The reason in words, for ``description``.
        private static func text(_ reason: Reason) -> String {
            switch reason {
            case .malformed: "its Link field value is malformed"
            case .unsupportedScheme: "not an http or https URL"
            case .invalidURL: "not a valid URL"
            case .otherContext: "its anchor names another resource"
            case .credentials: "it carries a user name or password"
            case .downgrade: "http under an https download (never downgraded)"
            case .sameAsResponse: "it is the URL being downloaded"
            case .repeated: "it repeats an earlier mirror"
            case .beyondLimit: "more than \(DuplicateLinks.maximumMirrorCount) mirrors"
            }
        }
    }

    /// The mirrors to use, best first, at most ``maximumMirrorCount``.
    package private(set) var mirrors: [Mirror] = []
    /// The Metalink description's URL (without userinfo), if the response names a usable one.
    package private(set) var metalink: HTTPURL?
    /// The mirror and Metalink links left out, in the order of the fields.
    package private(set) var dropped: [Dropped] = []
    /// Whether the `Link` fields were longer than ``LinkHeader`` reads (their rest unread).
    package private(set) var isCutOff: Bool

    /// Parses a response's `Link` fields and picks its mirrors and Metalink description.
    ///
    /// - Parameters:
    ///   - fieldValues: the values of every `Link` field, in the order received.
    ///   - responseURL: the URL whose response carried the fields (for a redirect, the URL
    ///     redirected from, not its `Location`).
    package init(fieldValues: [String], responseURL: HTTPURL) {
        self.init(LinkHeader(fieldValues: fieldValues, base: responseURL), responseURL: responseURL)
    }

    /// Picks the mirrors and the Metalink description among parsed links.
    ///
    /// - Parameters:
    ///   - header: the links, resolved against `responseURL`.
    ///   - responseURL: the URL whose response carried the fields.
    package init(_ header: LinkHeader, responseURL: HTTPURL) {
        isCutOff = header.isCutOff
        let response = responseURL.withoutUserinfo()
        for skipped in header.skipped {
            noteSkipped(skipped)
        }
        var candidates: [(mirror: Mirror, position: Int)] = []
        var seen: Set<HTTPURL> = [response]
        for link in header.links {
            if link.hasRelation("duplicate"), let mirror = mirror(link, response: response, seen: &seen) {
                candidates.append((mirror, link.position))
            }
            if metalink == nil, link.hasRelation("describedby"), isMetalink(link.parameter("type")) {
                metalink = accepted(link, isMirror: false, response: response)?.withoutUserinfo()
            }
        }
        keepBest(candidates)
        // In field order; a link dropped both as a mirror and as a description keeps that order.
        dropped = dropped.enumerated().sorted { ($0.element.position, $0.offset) < ($1.element.position, $1.offset) }.map(\.element)
    }

    /// The mirror `link` names, or `nil` (noted in ``dropped``) when it is refused.
    private mutating func mirror(_ link: LinkHeader.Link, response: HTTPURL, seen: inout Set<HTTPURL>) -> Mirror? {
        guard let url = accepted(link, isMirror: true, response: response)?.withoutUserinfo() else { return nil }
        guard url != response else {
            drop(link, isMirror: true, .sameAsResponse)
            return nil
        }
        guard seen.insert(url).inserted else {
            drop(link, isMirror: true, .repeated)
            return nil
        }
        return Mirror(url: url, priority: priority(link.parameter("pri")?.value), isPreferred: link.parameter("pref") != nil,
                      country: country(link.parameter("geo")?.value), depth: depth(link.parameter("depth")?.value))
    }

    /// The target of `link` when its anchor, credentials and scheme allow it; otherwise notes why
    /// not in ``dropped``.
    private mutating func accepted(_ link: LinkHeader.Link, isMirror: Bool, response: HTTPURL) -> HTTPURL? {
        if let anchor = link.parameter("anchor") {
            let context = try? response.resolving(anchor.value ?? "")
            guard context?.withoutUserinfo() == response else {
                drop(link, isMirror: isMirror, .otherContext)
                return nil
            }
        }
        guard !link.referenceHasUserinfo else {
            drop(link, isMirror: isMirror, .credentials)
            return nil
        }
        guard !(response.scheme == .https && link.target.scheme == .http) else {
            drop(link, isMirror: isMirror, .downgrade)
            return nil
        }
        return link.target
    }

    /// Orders the candidates (`pref`, then `pri`, then field order) and keeps the first
    /// ``maximumMirrorCount``; the rest are dropped.
    private mutating func keepBest(_ candidates: [(mirror: Mirror, position: Int)]) {
        let ordered = candidates.sorted { a, b in
            if a.mirror.isPreferred != b.mirror.isPreferred { return a.mirror.isPreferred }
            if a.mirror.priority != b.mirror.priority { return a.mirror.priority < b.mirror.priority }
            return a.position < b.position
        }
        mirrors = ordered.prefix(Self.maximumMirrorCount).map(\.mirror)
        for (mirror, position) in ordered.dropFirst(Self.maximumMirrorCount) {
            dropped.append(Dropped(isMirror: true, position: position, url: mirror.url.description, reason: .beyondLimit))
        }
    }

    /// Notes a link-value the parser set aside when it is a mirror or a Metalink description.
    private mutating func noteSkipped(_ skipped: LinkHeader.SkippedLink) {
        let isMirror = skipped.relations.contains("duplicate")
        let isDescription = skipped.relations.contains("describedby")
            && isMetalink(skipped.parameters.first { $0.name == "type" })
        guard isMirror || isDescription else { return }
        let reason: Dropped.Reason = switch skipped.problem {
        case .malformed: .malformed
        case .unsupportedScheme: .unsupportedScheme
        case .invalidURL: .invalidURL
        }
        dropped.append(Dropped(isMirror: isMirror, position: skipped.position, url: quotedForMessage(skipped.reference),
                               reason: reason))
    }

    /// Notes `link` in ``dropped``.
    private mutating func drop(_ link: LinkHeader.Link, isMirror: Bool, _ reason: Dropped.Reason) {
        dropped.append(Dropped(isMirror: isMirror, position: link.position, url: link.target.description, reason: reason))
    }
}

// MARK: - Parameter values

/// Whether a `type` parameter names the Metalink 4 media type (ASCII case ignored, parameters
/// after `;` allowed).
private func isMetalink(_ type: LinkHeader.Parameter?) -> Bool {
    guard let value = type?.value else { return false }
    let essence = value.utf8.prefix { $0 != UInt8(ascii: ";") }
    return String(Substring(essence)).trimmingOWS().asciiCaseInsensitiveEquals(DuplicateLinks.metalinkMediaType)
}

/// `pri`: digits making 1 to 999999 (spaces around allowed), else the default priority.
private func priority(_ value: String?) -> Int {
    guard let digits = value?.trimmingOWS(), let number = smallNumber(digits),
          DuplicateLinks.priorities.contains(number) else { return DuplicateLinks.defaultPriority }
    return number
}

/// `geo`: two ASCII letters, lowercased; anything else is no country.
private func country(_ value: String?) -> String? {
    guard let value = value?.trimmingOWS(), value.utf8.count == 2,
          value.utf8.allSatisfy({ isAlphanumeric($0) && !isDigit($0) }) else { return nil }
    return String(decoding: value.utf8.map { $0 | 0x20 }, as: UTF8.self)
}

/// `depth`: a non-negative number of at most 9 digits.
private func depth(_ value: String?) -> Int? {
    value.flatMap { smallNumber($0.trimmingOWS()) }
}

/// The number written by 1 to 9 ASCII digits (no sign, no overflow), else `nil`.
private func smallNumber(_ text: String) -> Int? {
    let bytes = text.utf8
    guard (1...9).contains(bytes.count), bytes.allSatisfy(isDigit) else { return nil }
    return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
}
