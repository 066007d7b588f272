/// Downloads ordered by their position, each with its place: adding, removing, finding a
/// download's place and the download at a place all cost O(log n).
///
/// A treap (a binary search tree on the positions whose nodes are also a heap on random
/// priorities, so its depth stays logarithmic in expectation) with each node's subtree size,
/// kept in one array. The priorities come from a generator of its own with a fixed seed, so the
/// same operations give the same shape. Positions are unique: adding one that is present
/// replaces its download.
struct RankedList {
    private struct Node {
        var position: Double
        var id: DownloadID
        var priority: UInt64
        var left: Int32 = -1
        var right: Int32 = -1
        var size: Int32 = 1
    }

    private var nodes: [Node] = []
    private var freeSlots: [Int32] = []
    private var root: Int32 = -1
    private var seed: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// An empty list.
    init() {}

    /// How many downloads it holds.
    var count: Int { size(root) }

    var isEmpty: Bool { root < 0 }

    /// The first download (the lowest position), if any.
    var first: (position: Double, id: DownloadID)? {
        guard root >= 0 else { return nil }
        var node = root
        while nodes[Int(node)].left >= 0 { node = nodes[Int(node)].left }
        return (nodes[Int(node)].position, nodes[Int(node)].id)
    }

    /// Adds `id` at `position` (replacing the download there, if any).
    mutating func insert(_ id: DownloadID, at position: Double) {
        let (below, rest) = split(root, below: position)
        let (match, above) = split(rest, below: position.nextUp)
        if match >= 0 { free(match) }
        root = merge(merge(below, makeNode(id, position)), above)
    }

    /// Removes the download at `position`; returns it, or `nil` when there is none.
    @discardableResult
    mutating func remove(at position: Double) -> DownloadID? {
        let (below, rest) = split(root, below: position)
        let (match, above) = split(rest, below: position.nextUp)
        let removed = match >= 0 ? nodes[Int(match)].id : nil
        if match >= 0 { free(match) }
        root = merge(below, above)
        return removed
    }

    /// How many downloads have a lower position than `position` (the place of the one there).
    func rank(of position: Double) -> Int {
        var node = root
        var rank = 0
        while node >= 0 {
            let current = nodes[Int(node)]
            if current.position < position {
                rank += size(current.left) + 1
                node = current.right
            } else {
                node = current.left
            }
        }
        return rank
    }

    /// The download at `place` (0 is the first); `nil` beyond the end.
    func element(at place: Int) -> (position: Double, id: DownloadID)? {
        guard place >= 0, place < count else { return nil }
        var node = root
        var place = place
        while true {
            let current = nodes[Int(node)]
            let leftSize = size(current.left)
            if place < leftSize {
                node = current.left
            } else if place == leftSize {
                return (current.position, current.id)
            } else {
                place -= leftSize + 1
                node = current.right
            }
        }
    }

    /// The downloads at `places`, in order (clamped to the list).
    func elements(in places: Range<Int>) -> [(position: Double, id: DownloadID)] {
        let wanted = places.clamped(to: 0..<count)
        var found: [(position: Double, id: DownloadID)] = []
        found.reserveCapacity(wanted.count)
        collect(root, skipping: wanted.lowerBound, upTo: wanted.count, into: &found)
        return found
    }

    /// Every download, in order.
    var all: [(position: Double, id: DownloadID)] { elements(in: 0..<count) }
}

// MARK: - The tree

extension RankedList {
    private func size(_ node: Int32) -> Int {
        node < 0 ? 0 : Int(nodes[Int(node)].size)
    }

    private mutating func update(_ node: Int32) {
        let current = nodes[Int(node)]
        nodes[Int(node)].size = Int32(1 + size(current.left) + size(current.right))
    }

    /// Splits the tree at `node` into the positions below `position` and the rest.
    private mutating func split(_ node: Int32, below position: Double) -> (Int32, Int32) {
        guard node >= 0 else { return (-1, -1) }
        if nodes[Int(node)].position < position {
            let (low, high) = split(nodes[Int(node)].right, below: position)
            nodes[Int(node)].right = low
            update(node)
            return (node, high)
        }
        let (low, high) = split(nodes[Int(node)].left, below: position)
        nodes[Int(node)].left = high
        update(node)
        return (low, node)
    }

    /// Joins two trees, every position of `low` below every position of `high`.
    private mutating func merge(_ low: Int32, _ high: Int32) -> Int32 {
        guard low >= 0 else { return high }
        guard high >= 0 else { return low }
        if nodes[Int(low)].priority > nodes[Int(high)].priority {
            nodes[Int(low)].right = merge(nodes[Int(low)].right, high)
            update(low)
            return low
        }
        nodes[Int(high)].left = merge(low, nodes[Int(high)].left)
        update(high)
        return high
    }

    private func collect(_ node: Int32, skipping skip: Int, upTo limit: Int,
                         into found: inout [(position: Double, id: DownloadID)]) {
        guard node >= 0, found.count < limit else { return }
        let current = nodes[Int(node)]
        let leftSize = size(current.left)
        if skip < leftSize { collect(current.left, skipping: skip, upTo: limit, into: &found) }
        guard found.count < limit else { return }
        if skip <= leftSize { found.append((current.position, current.id)) }
        collect(current.right, skipping: max(0, skip - leftSize - 1), upTo: limit, into: &found)
    }

    private mutating func makeNode(_ id: DownloadID, _ position: Double) -> Int32 {
        // xorshift64*: a fixed sequence, so a list's shape depends only on its operations.
        seed ^= seed >> 12
        seed ^= seed << 25
        seed ^= seed >> 27
        let node = Node(position: position, id: id, priority: seed &* 0x2545_F491_4F6C_DD1D)
        if let slot = freeSlots.popLast() {
            nodes[Int(slot)] = node
            return slot
        }
        nodes.append(node)
        return Int32(nodes.count - 1)
    }

    private mutating func free(_ node: Int32) {
        freeSlots.append(node)
    }
}
