import HaulJSON
/// A JSON-RPC 2.0 error object: `{"code":…,"message":…}`.
public struct RPCFault: Error, Sendable, Equatable {
    /// The code: 1 for every failure of a method (aria2's convention), or a JSON-RPC code.
    public var code: Int
    /// The message.
    public var message: String

    /// Creates a fault.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// A method failed (code 1), as aria2 reports it.
    public static func failure(_ message: String) -> RPCFault { RPCFault(code: 1, message: message) }
    /// -32700: the text is not JSON.
    public static let parseError = RPCFault(code: -32700, message: "Parse error.")
    /// -32600: not a request object (no `id`, no `method`).
    public static let invalidRequest = RPCFault(code: -32600, message: "Invalid Request.")
    /// -32601: no such method.
    public static let methodNotFound = RPCFault(code: -32601, message: "Method not found.")
    /// -32602: parameters that are not an array (named parameters).
    public static let invalidParams = RPCFault(code: -32602, message: "Invalid params.")
    /// -32600: a batch of more than ``Aria2RPC/maximumBatchCalls`` calls.
    public static let batchTooLarge = RPCFault(code: -32600, message: "Invalid Request: more than \(Aria2RPC.maximumBatchCalls) calls.")
    /// A `system.multicall` of more than ``Aria2RPC/maximumBatchCalls`` calls.
    public static let multicallTooLarge = RPCFault.failure("system.multicall takes at most \(Aria2RPC.maximumBatchCalls) calls.")
    /// -32600: the answer to a body without the valid token would pass
    /// ``Aria2RPC/unauthenticatedAnswerBytes``.
    public static let answerOverBudget = RPCFault(
        code: -32600, message: "Invalid Request: the answer is over \(Aria2RPC.unauthenticatedAnswerBytes) bytes without a valid token.")
    /// The token is missing or wrong.
    public static let unauthorized = RPCFault(code: 1, message: "Unauthorized")

    /// The error object.
    var json: JSONValue {
        .object(JSONObject([.init("code", .integer(code)), .init("message", .string(message))]))
    }

    /// The HTTP status aria2 answers a single call's fault with: 400 for a method's failure and
    /// an invalid request, 404 for an unknown method, 500 otherwise.
    var httpStatus: Int {
        switch code {
        case 1, -32600: 400
        case -32601: 404
        default: 500
        }
    }
}

/// One JSON-RPC response: `{"id":…,"jsonrpc":"2.0","result":…}` or `…"error":{…}` (members in
/// aria2's order, which is alphabetical).
struct RPCResponse: Sendable {
    var id: JSONValue
    var outcome: Result<JSONValue, RPCFault>

    var json: JSONValue {
        var object = JSONObject()
        switch outcome {
        case .success(let result):
            object.append("id", id)
            object.append("jsonrpc", "2.0")
            object.append("result", result)
        case .failure(let fault):
            object.append("error", fault.json)
            object.append("id", id)
            object.append("jsonrpc", "2.0")
        }
        return .object(object)
    }
}

/// A notification sent over a WebSocket: `{"jsonrpc":"2.0","method":…,"params":[{"gid":…}]}`.
public enum RPCNotification {
    /// The aria2 notifications, in aria2's order.
    public static let names = ["aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop",
                               "aria2.onDownloadComplete", "aria2.onDownloadError"]

    /// The text of a notification about one download.
    public static func text(method: String, gid: String) -> [UInt8] {
        JSONWriter.encode([
            "jsonrpc": "2.0",
            "method": .string(method),
            "params": [.object(JSONObject([.init("gid", .string(gid))]))],
        ])
    }
}
