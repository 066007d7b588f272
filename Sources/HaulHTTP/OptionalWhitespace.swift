import HaulCore
extension Substring.UTF8View {
    /// The bytes without the spaces and tabs around them (HTTP's optional whitespace, OWS);
    /// a view of the same text, no copy.
    package func trimmingOWS() -> Substring.UTF8View {
        var bytes = self
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (see ``Substring/UTF8View/trimmingOWS()``).
    package func trimmingOWS() -> String {
        String(Substring(Substring(self).utf8.trimmingOWS()))
    }
}
