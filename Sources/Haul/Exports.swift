// The HTTP types that Haul's public API speaks in, so `import Haul` is all a program needs.
@_exported import struct HaulHTTP.HTTPHeaders
@_exported import struct HaulHTTP.ResponseHead
@_exported import enum HaulCrypto.ChecksumAlgorithm
